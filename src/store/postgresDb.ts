import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { againAfterStrayCancel } from "./failures.ts";
import { applyLiveSql } from "./liveSql.ts";
import { migrateNamed, migrationsFolder, type OnMigration } from "./migrations.ts";
import { answersWithin, counted, poolUse } from "./poolUse.ts";
import { queryOf, type Runnable } from "./renderedStatement.ts";
import { renewingPool } from "./renewingPool.ts";
import { sentForRequest } from "./requestScope.ts";
import { guardedReservations, inTransaction, reservedConnectionClosed } from "./reservedConnections.ts";
import { wholeResults } from "./resultHoles.ts";
import * as schema from "./schema/index.ts";
import { type Fence, SERVING_HOST, standbyReads } from "./standbyReads.ts";
import { type Db, rowsOf, type Store, type UserOwner } from "./store.ts";

/**
 * Taken by every instance before migrating, so several servers booting on one database at once apply
 * each migration exactly once instead of racing on CREATE TABLE.
 */
const MIGRATION_LOCK = 7_265_001;

/** A statement's rows, sent prepared as the current request's (see `preparing`). */
async function preparedRows<T>(
  client: postgres.Sql | postgres.ReservedSql,
  statement: Runnable,
): Promise<T[]> {
  const query = queryOf(statement);
  return rowsOf<T>(
    await sentForRequest(() => client.unsafe(query.sql, query.params as never[], { prepare: true })),
  );
}

/**
 * A pooled statement stopped by a cancel its own request did not ask for is sent once more: a pooled
 * statement runs alone, outside any transaction, so a cancelled one changed nothing.
 */
function pooledRows<T>(client: postgres.Sql, statement: Runnable): Promise<T[]> {
  return againAfterStrayCancel(() => preparedRows<T>(client, statement));
}

/**
 * A Drizzle statement as Drizzle reads it (awaited, or its `values()`), sent once more when a cancel its
 * own request did not send stopped it, as `pooledRows` does: Drizzle's statements here are pooled, each
 * alone outside any transaction, so a cancelled one changed nothing.
 */
function retriedAfterStrayCancel(send: () => postgres.PendingQuery<postgres.Row[]>) {
  const run = <R>(read: (statement: postgres.PendingQuery<postgres.Row[]>) => Promise<R>): Promise<R> =>
    againAfterStrayCancel(() => read(send()));
  const rows = (
    statement: postgres.PendingQuery<postgres.Row[]>,
  ): Promise<postgres.RowList<postgres.Row[]>> => statement.then((result) => result);
  return {
    // biome-ignore lint/suspicious/noThenProperty: Drizzle awaits the statement unsafe() returns.
    then: <A, B>(
      onFulfilled: (value: postgres.RowList<postgres.Row[]>) => A,
      onRejected: (error: unknown) => B,
    ) => run(rows).then(onFulfilled, onRejected),
    values: () => run((statement) => statement.values().then((result) => result)),
  };
}

/**
 * Drizzle sends its statements through `unsafe()` with `prepare: false` (true only for its named
 * prepared queries), so PostgreSQL would parse and plan every statement of every request again, most of
 * a stats request's time (docs/performance.md §7). The service's statements have fixed texts (batches
 * travel as arrays through unnest, not as variable-length VALUES lists), so preparing them all is safe:
 * postgres.js keeps one prepared statement per distinct text per connection. Every statement is sent as
 * the current request's (requestScope.ts), so a request that ends early calls it off.
 */
function preparing(client: postgres.Sql): postgres.Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (
          query: string,
          args?: postgres.ParameterOrJSON<never>[],
          options?: postgres.UnsafeQueryOptions,
        ) =>
          retriedAfterStrayCancel(() =>
            sentForRequest(() => target.unsafe(query, args, { ...options, prepare: true })),
          );
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

/**
 * How long a replaced pool (renewingPool.ts) may finish what it was given. A batch or a read takes
 * milliseconds, so two seconds end them all while a statement stuck behind a connection that can no
 * longer connect fails soon; an export holds its connection for as long as its client reads, up to its
 * own deadline (EXPORT_DEADLINE_SECONDS, 60 by default).
 */
const STATEMENT_POOL_RETIRE_SECONDS = 2;
const EXPORT_POOL_RETIRE_SECONDS = 60;

async function migrated(url: string, onMigration: OnMigration): Promise<void> {
  const migrator = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrateNamed(
      (text) => migrator.unsafe(text),
      () => migratePostgres(drizzlePostgres(migrator), { migrationsFolder }),
      onMigration,
    );
    await applyLiveSql((statement) => migrator.unsafe(statement));
    await migrator`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await migrator.end();
  }
}

export async function openPostgres(
  url: string,
  sizes: { main: number; read: number; exports: number },
  migrate: boolean,
  onMigration: OnMigration,
  readUrl: string | null,
  maxReadLagSeconds: number,
): Promise<Store> {
  if (migrate) await migrated(url, onMigration);
  const connect = (
    max: number,
    maxPipeline: number,
    retireSeconds = STATEMENT_POOL_RETIRE_SECONDS,
    poolUrl = url,
  ) =>
    renewingPool((onclose) => {
      const options: PoolOptions = {
        max,
        max_pipeline: maxPipeline,
        onnotice: () => {},
        onclose: (connectionId) => {
          reservedConnectionClosed(connectionId);
          onclose();
        },
        // Every statement here is a short index-driven read or write: compiling a plan with JIT costs more
        // than running it, and the planner's estimates for a heavy user would otherwise trigger it.
        connection: { application_name: "rollcall", jit: "off" },
        backoff: () => RECONNECT_DELAY_SECONDS,
      };
      const client = postgres(poolUrl, options);
      // Drizzle's type parsers, set on each pool as it is made (Drizzle sets them on the client it wraps).
      drizzlePostgres(client, { schema });
      return wholeResults(client);
    }, retireSeconds);
  const mainPool = connect(sizes.main, DEFAULT_PIPELINE);
  // History pages and stats get connections of their own, fewer than the main pool: each keeps
  // PostgreSQL computing for as long as it holds its connection, and on a small machine many of them at
  // once starve the server's own thread and widen the tail (docs/performance.md §4). Batches spend most
  // of their connection time waiting on the commit's flush, so they keep the larger pool.
  const readPool = connect(sizes.read, READ_PIPELINE);
  // An export sends one statement at a time on a connection it reserves, so no pipelining applies.
  const exportPool = connect(sizes.exports, DEFAULT_PIPELINE, EXPORT_POOL_RETIRE_SECONDS);
  const client = mainPool.client;
  const readClient = readPool.client;
  const db = drizzlePostgres(preparing(client), { schema }) as unknown as Db;
  const main = poolUse("main", sizes.main);
  const read = poolUse("read", sizes.read);
  const exports = poolUse("export", sizes.exports);
  const guardedClient = guardedReservations(client, main);
  const rows = <T>(statement: Runnable) => counted(main, () => pooledRows<T>(client, statement));
  const readOnPrimary = <T>(statement: Runnable) => counted(read, () => pooledRows<T>(readClient, statement));
  // Standbys get pools like the primary's read and export pools: the same work, the same reasons.
  const standbyUse = poolUse("standby", sizes.read);
  const standbyExportUse = poolUse("standby_export", sizes.exports);
  const standby = readUrl === null ? null : openStandby(readUrl);
  function openStandby(standbyUrl: string) {
    const reads = connect(sizes.read, READ_PIPELINE, undefined, standbyUrl);
    const exported = connect(sizes.exports, DEFAULT_PIPELINE, EXPORT_POOL_RETIRE_SECONDS, standbyUrl);
    return standbyReads(
      { reads: reads.client, exports: guardedReservations(exported.client, standbyExportUse) },
      (statement) => counted(standbyUse, () => pooledRows(reads.client, statement)),
      maxReadLagSeconds,
      rows,
      async () => {
        await Promise.all([reads.end(), exported.end()]);
      },
    );
  }
  let writesHost: string | null = null;
  return {
    kind: "postgres",
    db,
    client: guardedClient,
    exportClient: guardedReservations(exportPool.client, exports),
    rows,
    transaction: (work) =>
      inTransaction(guardedClient, (connection) =>
        work({
          rows: <T>(statement: Runnable) => preparedRows<T>(connection, statement),
        }),
      ),
    read: readOnPrimary,
    readForUser: <T>(owner: UserOwner, statementFor: (fence: Fence | null) => Runnable) =>
      standby === null
        ? readOnPrimary<T>(statementFor(null))
        : standby.readForUser<T>(owner, statementFor, readOnPrimary),
    topology: () => {
      const seen = standby?.state();
      return {
        writes: writesHost,
        reads: seen?.usable === true ? seen.host : null,
        lagSeconds: seen?.lagSeconds ?? null,
        standbyReads: standby?.counts() ?? null,
      };
    },
    pools: () => [
      { ...main },
      { ...read },
      { ...exports },
      ...(standby === null ? [] : [{ ...standbyUse }, { ...standbyExportUse }]),
    ],
    standby,
    ping: (timeoutMs) =>
      answersWithin(async () => {
        const [[serving]] = await Promise.all([
          client.unsafe<{ host: string }[]>(`select ${SERVING_HOST} as host`),
          readClient`select 1`.execute(),
        ]);
        writesHost = serving?.host ?? null;
      }, timeoutMs),
    close: async () => {
      await Promise.all([mainPool.end(), readPool.end(), exportPool.end(), standby?.close()]);
    },
  };
}
