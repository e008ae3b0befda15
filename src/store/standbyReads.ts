import { type SQL, sql } from "drizzle-orm";
import type postgres from "postgres";
import { answersWithin } from "./poolUse.ts";
import { type Runnable, renderedOnce, type Slots } from "./renderedStatement.ts";
import { RequestAbortedError } from "./requestScope.ts";

/**
 * History pages, stats and exports read on the hot standbys of `DATABASE_READ_URL` (docs/operations.md §9,
 * docs/architecture.md §6), with read-your-writes per user held by the database itself, so it holds
 * across every instance: each write a user's reads show moves `users.revision` in its own transaction;
 * a read first takes the user's revision from the primary (a primary-key lookup), then runs on a
 * standby with `standby_serves` (src/store/sql/standby_reads.sql) in its user condition, which passes
 * only where the standby's copy of the row has that revision (the user's last acknowledged write is
 * replayed, all of it, as it was one transaction) and the standby streams within the lag bound. A
 * standby that fails either test answers no row; the read then runs on the primary, as it does when
 * the standby errs or the watch below has found it away or behind.
 */

/** What a standby read is told: the user's revision on the primary, and the lag the standby may have. */
export type Fence = { revision: number; maxLagSeconds: number };

/** How reads were served, counted for the metrics. */
export type StandbyCounts = { standby: number; behind: number; failed: number; skipped: number };

/** What an operator sees of the standby: which host answers, its lag, and whether reads go there. */
export type StandbyState = { host: string | null; lagSeconds: number | null; usable: boolean };

export type StandbyReads = {
  /** `statementFor(fence)` on a standby, or `statementFor(null)` on the primary (`primary`). */
  readForUser<T>(
    owner: { partnerId: string; userId: string },
    statementFor: (fence: Fence | null) => Runnable,
    primary: (statement: Runnable) => Promise<T[]>,
  ): Promise<T[]>;
  /** The standbys' export pool while they may serve, else null (exportOnPostgres.ts). */
  exportClient(): postgres.Sql | null;
  readonly maxLagSeconds: number;
  /** Counts a read served elsewhere than `readForUser` (an export). */
  count(outcome: keyof StandbyCounts): void;
  state(): StandbyState;
  counts(): StandbyCounts;
  close(): Promise<void>;
};

/** The user's revision on the primary, for the read's fence; no row for a user the partner does not have. */
const revisionQuery = renderedOnce(
  ["userId", "partnerId"],
  ({ userId, partnerId }) =>
    sql`select revision from users where id = ${userId}::uuid and partner_id = ${partnerId}`,
);

/** A server's name for itself, `address:port`, as /readyz and the metrics show the hosts serving. */
export const SERVING_HOST = "coalesce(host(inet_server_addr()), 'local') || ':' || current_setting('port')";

/** The standby's host, its replay lag, and whether it streams (standby_reads.sql). */
const STANDBY_STATE = `select ${SERVING_HOST} as host, standby_lag_seconds() as lag_seconds, standby_streams() as streams`;

/**
 * How often the standby is asked for its state, and so how soon reads leave or come back to it, and how
 * long it has to answer (as the primary's watch, observability/databaseWatch.ts).
 */
const CHECK_EVERY_MS = 1000;
const ANSWER_WITHIN_MS = 2000;

/**
 * How long a read, or an export's opening, waits for a standby before the primary serves it instead: a
 * standby that hangs (a network partition, a machine that stopped) would otherwise hold it to its
 * deadline before the watch saw it go. Reads take milliseconds; this leaves the primary most of the
 * request's 8 s.
 */
const STANDBY_ANSWER_WITHIN_MS = 3000;

/**
 * What `work` settles to, or "late" when it has not within STANDBY_ANSWER_WITHIN_MS; it is then left
 * to finish unseen, and `late` runs on what it brings, if anything.
 */
export async function fromStandbyInTime<T>(
  work: Promise<T>,
  late: (value: T) => void = () => {},
): Promise<T | "late"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), STANDBY_ANSWER_WITHIN_MS);
  });
  const answer = await Promise.race([work, timeUp]).finally(() => clearTimeout(timer));
  if (answer === "late") work.then(late, () => {});
  return answer;
}

type StandbyRow = { host: string; lag_seconds: number | null; streams: boolean };

/**
 * The router over the standbys' pools (reads, and exports' reserved connections): `onStandby` runs a
 * read on the first as the current request's, `primaryRows` the revision lookup on the primary's main
 * pool. A watch asks the standby for its state every second, so that reads skip it while it is away or
 * behind instead of each waiting to find out.
 */
export function standbyReads(
  { reads: client, exports: exportClient }: { reads: postgres.Sql; exports: postgres.Sql },
  onStandby: <T>(statement: Runnable) => Promise<T[]>,
  maxLagSeconds: number,
  primaryRows: <T>(statement: Runnable) => Promise<T[]>,
  end: () => Promise<void>,
): StandbyReads {
  let state: StandbyState = { host: null, lagSeconds: null, usable: false };
  const counts: StandbyCounts = { standby: 0, behind: 0, failed: 0, skipped: 0 };
  let checking = false;
  const check = async () => {
    // A check still waiting for its answer answers for this one too.
    if (checking) return;
    checking = true;
    let row: StandbyRow | undefined;
    const answered = await answersWithin(async () => {
      [row] = (await client.unsafe(STANDBY_STATE)) as unknown as StandbyRow[];
    }, ANSWER_WITHIN_MS);
    checking = false;
    if (!answered || row === undefined) {
      state = { host: null, lagSeconds: null, usable: false };
      return;
    }
    const lag = row.lag_seconds;
    state = { host: row.host, lagSeconds: lag, usable: row.streams && lag !== null && lag <= maxLagSeconds };
  };
  const timer = setInterval(() => void check(), CHECK_EVERY_MS);
  timer.unref();
  void check();
  return {
    async readForUser<T>(
      owner: { partnerId: string; userId: string },
      statementFor: (fence: Fence | null) => Runnable,
      primary: (statement: Runnable) => Promise<T[]>,
    ): Promise<T[]> {
      if (!state.usable) {
        counts.skipped++;
        return primary(statementFor(null));
      }
      const [user] = await primaryRows<{ revision: string | number }>(revisionQuery(owner));
      if (user === undefined) return [];
      try {
        const fence = { revision: Number(user.revision), maxLagSeconds };
        const rows = await fromStandbyInTime(onStandby<T>(statementFor(fence)));
        if (rows === "late") {
          counts.failed++;
        } else if (rows.length > 0) {
          counts.standby++;
          return rows;
        } else {
          counts.behind++;
        }
      } catch (error) {
        if (error instanceof RequestAbortedError) throw error;
        // A read changes nothing, so the primary may answer it again, whatever the standby's failure.
        counts.failed++;
      }
      return primary(statementFor(null));
    },
    exportClient: () => (state.usable ? exportClient : null),
    maxLagSeconds,
    count: (outcome) => {
      counts[outcome]++;
    },
    state: () => ({ ...state }),
    counts: () => ({ ...counts }),
    close: async () => {
      clearInterval(timer);
      await end();
    },
  };
}

/** The condition a standby's statement adds to its user lookup, on slots `revision` and `maxLagSeconds`. */
export const fenced = (s: Slots<"revision" | "maxLagSeconds">): SQL =>
  sql`and standby_serves(u.revision, ${s.revision}::int8, ${s.maxLagSeconds}::float8)`;
