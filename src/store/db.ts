import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

export type Schema = typeof schema;

/** The Drizzle database both drivers present: code above the store never knows which one it has. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/** What a transaction callback receives; it supports the same query builder as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type Store = {
  readonly kind: "postgres" | "pglite";
  readonly db: Db;
  /** Runs raw SQL and returns its rows, papering over the drivers' different result shapes. */
  rows<T>(query: SQL, executor?: Db | Tx): Promise<T[]>;
  /** The postgres.js client, for COPY; null on PGlite (callers fall back to unnest batches). */
  readonly client: postgres.Sql | null;
  close(): Promise<void>;
};

const migrationsFolder = join(dirname(new URL(import.meta.url).pathname), "..", "..", "drizzle");

/**
 * Taken by every instance before migrating, so several servers booting on one database at once apply
 * each migration exactly once instead of racing on CREATE TABLE.
 */
const MIGRATION_LOCK = 7_265_001;

function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

export type OpenOptions = {
  databaseUrl: string | null;
  dataDir: string;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
};

export async function openStore(options: OpenOptions): Promise<Store> {
  return options.databaseUrl === null
    ? openPglite(options.dataDir)
    : openPostgres(options.databaseUrl, options.poolSize ?? 10);
}

async function openPostgres(url: string, poolSize: number): Promise<Store> {
  const migrator = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(drizzlePostgres(migrator), { migrationsFolder });
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await migrator.end();
  }
  const client = postgres(url, { max: poolSize, onnotice: () => {} });
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  return {
    kind: "postgres",
    db,
    client,
    rows: async <T>(query: SQL, executor: Db | Tx = db) => rowsOf<T>(await executor.execute(query)),
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string): Promise<Store> {
  mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir);
  const db = drizzlePglite(pglite, { schema }) as unknown as Db;
  await migratePglite(drizzlePglite(pglite), { migrationsFolder });
  return {
    kind: "pglite",
    db,
    client: null,
    rows: async <T>(query: SQL, executor: Db | Tx = db) => rowsOf<T>(await executor.execute(query)),
    close: () => pglite.close(),
  };
}
