import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { DEFAULT_EXPORTS_PER_INSTANCE } from "../config.ts";
import { privateDataDir } from "./embeddedFiles.ts";
import { applyLiveSql } from "./liveSql.ts";
import { answersWithin, counted, countingReservations, type PoolUse, poolUse } from "./poolUse.ts";
import { queryOf, type Runnable, statementOf } from "./renderedStatement.ts";
import { sentForRequest } from "./requestScope.ts";
import * as schema from "./schema/index.ts";

export type Schema = typeof schema;

/** The Drizzle database both drivers present: code above the store never knows which one it has. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/** What a transaction callback receives; it supports the same query builder as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type Store = {
  readonly kind: "postgres" | "pglite";
  readonly db: Db;
  /**
   * Runs raw SQL and returns its rows, papering over the drivers' different result shapes. Outside a
   * transaction a statement rendered once (`renderedOnce`) goes straight to the driver.
   */
  rows<T>(statement: Runnable, executor?: Db | Tx): Promise<T[]>;
  /**
   * `rows` for the heavy reads (history pages, stats), on connections of their own (see openPostgres).
   * A statement rendered once (`renderedOnce`) goes straight to the driver with its parameters.
   */
  read<T>(statement: Runnable): Promise<T[]>;
  /** The postgres.js client, for COPY; null on PGlite (callers fall back to unnest batches). */
  readonly client: postgres.Sql | null;
  /**
   * The pool user exports hold their snapshots on, one connection each for as long as the client reads,
   * apart from everyone else's; null on PGlite.
   */
  readonly exportClient: postgres.Sql | null;
  /** How busy each connection pool is, for metrics. */
  pools(): PoolUse[];
  /** Whether a connection of each pool that serves requests answers a trivial statement within `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
};

const migrationsFolder = join(dirname(new URL(import.meta.url).pathname), "..", "..", "drizzle");

/**
 * Taken by every instance before migrating, so several servers booting on one database at once apply
 * each migration exactly once instead of racing on CREATE TABLE.
 */
const MIGRATION_LOCK = 7_265_001;

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

function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

export type OpenOptions = {
  databaseUrl: string | null;
  dataDir: string;
  /** Connections in the postgres.js pool. */
  poolSize?: number;
  /** Connections for the heavy reads. */
  readPoolSize?: number;
  /** Connections for user exports, which also bounds how many run at once. */
  exportPoolSize?: number;
  /**
   * Whether to apply pending migrations first (default true). A request thread opens the store after
   * its supervisor has migrated it, and skips the lock and the migrator's connection.
   */
  migrate?: boolean;
};

export async function openStore(options: OpenOptions): Promise<Store> {
  return options.databaseUrl === null
    ? openPglite(options.dataDir)
    : openPostgres(
        options.databaseUrl,
        {
          main: options.poolSize ?? 10,
          read: options.readPoolSize ?? 2,
          exports: options.exportPoolSize ?? DEFAULT_EXPORTS_PER_INSTANCE,
        },
        options.migrate ?? true,
      );
}

/**
 * Drizzle sends its statements through `unsafe()` with `prepare: false` (true only for its named
 * prepared queries), so PostgreSQL would parse and plan every statement of every request again, most of
 * a stats request's time (docs/performance.md §7). The service's statements have fixed texts (batches
 * travel as arrays through unnest, not as variable-length VALUES lists), so preparing them all is safe:
 * postgres.js keeps one prepared statement per distinct text per connection. Transactions hand Drizzle
 * an inner client, which is wrapped the same way. Every statement is sent as the current request's
 * (requestScope.ts), so a request that ends early calls it off.
 */
function preparing<C extends postgres.Sql | postgres.TransactionSql>(client: C): C {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (
          query: string,
          args?: postgres.ParameterOrJSON<never>[],
          options?: postgres.UnsafeQueryOptions,
        ) => sentForRequest(() => target.unsafe(query, args, { ...options, prepare: true }));
      }
      if (property === "begin" && "begin" in target) {
        return (...args: unknown[]) => {
          const callback = args.pop() as (inner: postgres.TransactionSql) => unknown;
          const wrapped = (inner: postgres.TransactionSql) => callback(preparing(inner));
          return Reflect.apply(target.begin, target, [...args, wrapped]);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/** postgres.js reads `max_pipeline` (src/index.js, 3.4) but its type declarations leave it out. */
type PoolOptions = postgres.Options<Record<string, never>> & { max_pipeline: number };

/** postgres.js's own default: a connection takes up to 100 statements before the pool queues them. */
const DEFAULT_PIPELINE = 100;

/**
 * How many reads one read connection has sent and not yet answered. postgres.js hands a statement to
 * the next busy connection, round robin, until each has this many, so with its default of 100 the
 * requests in flight form one private queue per connection: a request stuck behind a heavy user's page
 * waits for it while another connection idles through its own queue, which stretches the tail. At 4,
 * each backend still finds its next statement waiting in its socket when it finishes one (it never
 * idles while the server's thread turns a page into JSON), and the rest wait in the pool's one shared
 * queue, taken by whichever connection frees first; at 1 the backends idle between statements and
 * throughput falls (docs/performance.md §4).
 */
const READ_PIPELINE = 4;

/**
 * How long a connection waits before it reconnects after a failure. postgres.js's default grows to 20 s
 * as failures add up, so after a minute's outage the pools would stay away long after the database was
 * back. A refused connection costs a fraction of a millisecond, so trying every quarter second while it
 * is away costs nothing, and service resumes within a quarter second of its return.
 */
const RECONNECT_DELAY_SECONDS = 0.25;

async function migrated(url: string): Promise<void> {
  const migrator = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(drizzlePostgres(migrator), { migrationsFolder });
    await applyLiveSql((statement) => migrator.unsafe(statement));
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await migrator.end();
  }
}

async function openPostgres(
  url: string,
  sizes: { main: number; read: number; exports: number },
  migrate: boolean,
): Promise<Store> {
  if (migrate) await migrated(url);
  const connect = (max: number, maxPipeline: number) => {
    const options: PoolOptions = {
      max,
      max_pipeline: maxPipeline,
      onnotice: () => {},
      // Every statement here is a short index-driven read or write: compiling a plan with JIT costs more
      // than running it, and the planner's estimates for a heavy user would otherwise trigger it.
      connection: { application_name: "rollcall", jit: "off" },
      backoff: () => RECONNECT_DELAY_SECONDS,
    };
    return postgres(url, options);
  };
  const client = connect(sizes.main, DEFAULT_PIPELINE);
  // History pages and stats get connections of their own, fewer than the main pool: each keeps
  // PostgreSQL computing for as long as it holds its connection, and on a small machine many of them at
  // once starve the server's own thread and widen the tail (docs/performance.md §4). Batches spend most
  // of their connection time waiting on the commit's flush, so they keep the larger pool.
  const readClient = connect(sizes.read, READ_PIPELINE);
  // An export sends one statement at a time on a connection it reserves, so no pipelining applies.
  const exportClient = connect(sizes.exports, DEFAULT_PIPELINE);
  const db = drizzlePostgres(preparing(client), { schema }) as unknown as Db;
  // Drizzle sets its type parsers on the client it wraps; reads share them without its query wrapper.
  drizzlePostgres(readClient, { schema });
  drizzlePostgres(exportClient, { schema });
  const main = poolUse("main", sizes.main);
  const read = poolUse("read", sizes.read);
  const exports = poolUse("export", sizes.exports);
  return {
    kind: "postgres",
    db,
    client: countingReservations(client, main),
    exportClient: countingReservations(exportClient, exports),
    rows: <T>(statement: Runnable, executor?: Db | Tx) =>
      counted(main, async () => {
        if (executor !== undefined) return rowsOf<T>(await executor.execute(statementOf(statement)));
        const query = queryOf(statement);
        return rowsOf<T>(
          await sentForRequest(() => client.unsafe(query.sql, query.params as never[], { prepare: true })),
        );
      }),
    read: <T>(statement: Runnable) =>
      counted(read, async () => {
        const query = queryOf(statement);
        return rowsOf<T>(
          await sentForRequest(() =>
            readClient.unsafe(query.sql, query.params as never[], { prepare: true }),
          ),
        );
      }),
    pools: () => [{ ...main }, { ...read }, { ...exports }],
    ping: (timeoutMs) =>
      answersWithin(
        () => Promise.all([client`select 1`.execute(), readClient`select 1`.execute()]),
        timeoutMs,
      ),
    close: async () => {
      await Promise.all([
        client.end({ timeout: 5 }),
        readClient.end({ timeout: 5 }),
        exportClient.end({ timeout: 5 }),
      ]);
    },
  };
}

/** Raised when another live process (a running server, or a CLI import) has the embedded database open. */
export class EmbeddedDatabaseBusyError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * PGlite is an in-process database: a second process opening the same directory would work on its own
 * copy and overwrite the first one's files on close, silently losing data. So the directory is locked
 * for the lifetime of the opening process (a pid file, created exclusively); a lock whose process has
 * died is taken over. Returns the release function.
 */
function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "rollcall.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new EmbeddedDatabaseBusyError(
          `the embedded database in ${dataDir} is in use by process ${holder} (a running server or another ` +
            "command); stop it first, or run the server and the CLI on PostgreSQL with DATABASE_URL",
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new EmbeddedDatabaseBusyError(`could not lock the embedded database in ${dataDir}`);
}

async function openPglite(dataDir: string): Promise<Store> {
  const files = privateDataDir(dataDir);
  const unlock = lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({ fs: files });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = drizzlePglite(pglite, { schema }) as unknown as Db;
  await migratePglite(drizzlePglite(pglite), { migrationsFolder });
  await applyLiveSql((statement) => pglite.exec(statement));
  const embedded = poolUse("embedded", 1);
  return {
    kind: "pglite",
    db,
    client: null,
    exportClient: null,
    rows: <T>(statement: Runnable, executor: Db | Tx = db) =>
      counted(embedded, async () => rowsOf<T>(await executor.execute(statementOf(statement)))),
    read: <T>(statement: Runnable) =>
      counted(embedded, async () => rowsOf<T>(await db.execute(statementOf(statement)))),
    pools: () => [{ ...embedded }],
    ping: (timeoutMs) => answersWithin(() => pglite.query("select 1"), timeoutMs),
    close: async () => {
      await pglite.close();
      unlock();
    },
  };
}
