import { DEFAULT_EXPORTS_PER_INSTANCE, DEFAULT_READ_MAX_LAG_SECONDS } from "../config.ts";
import { openPglite } from "./embeddedDb.ts";
import type { OnMigration } from "./migrations.ts";
import { openPostgres } from "./postgresDb.ts";
import type { Store } from "./store.ts";

export { EmbeddedDatabaseBusyError } from "./embeddedDb.ts";
export type { Db, Schema, Store, TransactionRows, Tx } from "./store.ts";

/**
 * Keeps user_events' copies of event facts (start, venue, licence) in step with a catalog import that
 * rewrites events. A batch holds it shared for its whole transaction, so batches never wait on one
 * another; an import takes it exclusively just before it refreshes the copies and keeps it until it
 * commits. Without it, a batch that read an event before the import committed could write its copies
 * after the import's refresh had passed, and keep the old start or licence for good.
 */
export const ATTENDANCE_COPIES_LOCK = 7_265_003;

/** Serialises imports: each validates against the catalog it read, which a concurrent import would change. */
export const CATALOG_IMPORT_LOCK = 7_265_002;

export type OpenOptions = {
  databaseUrl: string | null;
  /** The hot standbys history pages and stats read on (docs/operations.md §9); none when absent. */
  databaseReadUrl?: string | null;
  /** How far behind a standby may be and still serve reads. */
  databaseReadMaxLagSeconds?: number;
  dataDir: string;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
  /** Connections for the heavy reads. */
  readPoolSize?: number;
  /** Connections for user exports, which also bounds how many run at once. */
  exportPoolSize?: number;
  /**
   * Whether to apply pending migrations first (default true). A request thread opens the store after
   * its supervisor has migrated it, and skips the lock and the migrator's connection; `cli status`
   * reports a schema it must not change.
   */
  migrate?: boolean;
  /** Told each migration applied, by name (the start log, the CLI). */
  onMigration?: OnMigration;
};

export async function openStore(options: OpenOptions): Promise<Store> {
  const onMigration = options.onMigration ?? (() => {});
  return options.databaseUrl === null
    ? openPglite(options.dataDir, options.migrate ?? true, onMigration)
    : openPostgres(
        options.databaseUrl,
        {
          main: options.poolSize ?? 10,
          read: options.readPoolSize ?? 2,
          exports: options.exportPoolSize ?? DEFAULT_EXPORTS_PER_INSTANCE,
        },
        options.migrate ?? true,
        onMigration,
        options.databaseReadUrl ?? null,
        options.databaseReadMaxLagSeconds ?? DEFAULT_READ_MAX_LAG_SECONDS,
      );
}
