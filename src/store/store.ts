import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import type { PoolUse } from "./poolUse.ts";
import type { Runnable } from "./renderedStatement.ts";
import type * as schema from "./schema/index.ts";
import type { Fence, StandbyCounts, StandbyReads } from "./standbyReads.ts";

export type Schema = typeof schema;

/** The Drizzle database both drivers present: code above the store never knows which one it has. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

/** What a transaction callback receives; it supports the same query builder as Db. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** What runs statements inside `Store.transaction`. */
export type TransactionRows = { rows<T>(statement: Runnable): Promise<T[]> };

/** The user a read is for, and the partner asking: another partner's user is no user at all. */
export type UserOwner = { partnerId: string; userId: string };

/** Which hosts serve, as each names itself (`address:port`), for /readyz and the metrics. */
export type Topology = {
  /** Null until the primary has answered the database watch. */
  writes: string | null;
  /** Where history pages and stats go: a standby, or null when they go to the primary. */
  reads: string | null;
  /** The standby's replay lag as last seen; null without DATABASE_READ_URL or while it is away. */
  lagSeconds: number | null;
  /** How reads meant for a standby were served since start; null without DATABASE_READ_URL. */
  standbyReads: StandbyCounts | null;
};

export type Store = {
  readonly kind: "postgres" | "pglite";
  readonly db: Db;
  /**
   * Runs raw SQL and returns its rows, papering over the drivers' different result shapes. Outside a
   * transaction a statement rendered once (`renderedOnce`) goes straight to the driver.
   */
  rows<T>(statement: Runnable): Promise<T[]>;
  /**
   * Runs `work` in one transaction, on a connection of its own on PostgreSQL: it commits when `work`
   * returns and rolls back when it throws.
   */
  transaction<T>(work: (tx: TransactionRows) => Promise<T>): Promise<T>;
  /**
   * `rows` for the heavy reads (history pages, stats), on connections of their own (see openPostgres).
   * A statement rendered once (`renderedOnce`) goes straight to the driver with its parameters.
   */
  read<T>(statement: Runnable): Promise<T[]>;
  /**
   * A read of one user's own rows (history pages, stats): on a standby of DATABASE_READ_URL when one
   * may answer it (standbyReads.ts), else `read` of `statementFor(null)`, as without standbys.
   */
  readForUser<T>(owner: UserOwner, statementFor: (fence: Fence | null) => Runnable): Promise<T[]>;
  topology(): Topology;
  /**
   * The postgres.js client, for COPY and transactions of raw statements; null on PGlite (callers fall
   * back to unnest batches). Its reserved connections are guarded (reservedConnections.ts).
   */
  readonly client: postgres.Sql | null;
  /**
   * The pool user exports hold their snapshots on, one connection each for as long as the client reads,
   * apart from everyone else's; null on PGlite.
   */
  readonly exportClient: postgres.Sql | null;
  /** The standbys of DATABASE_READ_URL, for exports (reads go through `readForUser`); null without. */
  readonly standby: StandbyReads | null;
  /** How busy each connection pool is, for metrics. */
  pools(): PoolUse[];
  /** Whether a connection of each pool that serves requests answers a trivial statement within `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
};

export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
