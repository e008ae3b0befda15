import { sql } from "drizzle-orm";
import type { BatchWrite } from "./batchInput.ts";
import { ATTENDANCE_COPIES_LOCK, type Store } from "./db.ts";
import { renderedOnce } from "./renderedStatement.ts";
import { outsideRequests } from "./requestScope.ts";

/*
 * The write of media batches that keep nothing, most of a camera roll's batches, grouped: one statement
 * of them is in flight per store (per request thread), and the batches that arrive meanwhile go out
 * together in the next, as one statement and one commit (src/store/sql/batches_keeping_nothing.sql).
 * Under load each statement carries several batches, which saves PostgreSQL's CPU a batch
 * (docs/performance.md §12). A batch that finds nothing in flight goes out at once, alone, so a quiet
 * service waits for nothing. The statement never waits for one user's row lock (it skips a locked user,
 * whose batch goes again as a whole batch), so no user can hold up the others' batches.
 */

/**
 * What the write left for one batch: its sync mark, no such user, or `whole`: nothing was written and
 * the batch must go again as a whole batch (some of its ids are stored and must be removed, or another
 * transaction held the user's row).
 */
export type NothingKeptOutcome = { lastSyncAt: Date } | "no_user" | "whole";

/**
 * The most batches one statement carries: 32 batches of 200 ids are 6,400 ids, a statement of about
 * 0.3 MB and a few milliseconds of PostgreSQL's time, which the batches after it wait for.
 */
const MOST_BATCHES_A_STATEMENT = 32;

type Row = {
  batch_index: number;
  last_sync_ms: number | null;
  outcome: "written" | "no_user" | "user_busy" | "replaces_stored";
};

const batchesKeepingNothing = renderedOnce(
  ["users", "partners", "ids", "idCounts"],
  (s) => sql`select batch_index, last_sync_ms, outcome
    from batches_keeping_nothing(${ATTENDANCE_COPIES_LOCK}::int8, ${s.users}::uuid[], ${s.partners}::text[],
                                 ${s.ids}::text[], ${s.idCounts}::int[])`,
);

type Waiting = {
  batch: BatchWrite;
  resolve: (outcome: NothingKeptOutcome) => void;
  reject: (error: unknown) => void;
};

function outcomeOf(row: Row | undefined, position: number): NothingKeptOutcome {
  if (row === undefined || row.batch_index !== position) {
    throw new Error(`batches_keeping_nothing answered out of order at batch ${position}`);
  }
  switch (row.outcome) {
    case "no_user":
      return "no_user";
    case "user_busy":
    case "replaces_stored":
      return "whole";
    case "written":
      if (row.last_sync_ms === null) throw new Error("batches_keeping_nothing wrote no sync mark");
      return { lastSyncAt: new Date(row.last_sync_ms) };
  }
}

/** One store's queue: the statement in flight, and the batches waiting for the next. */
class NothingKeptWrites {
  readonly #waiting: Waiting[] = [];
  #sending = false;

  constructor(private readonly store: Store) {}

  write(batch: BatchWrite): Promise<NothingKeptOutcome> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ batch, resolve, reject });
      this.#sendWaiting();
    });
  }

  #sendWaiting(): void {
    if (this.#sending || this.#waiting.length === 0) return;
    this.#sending = true;
    const group = this.#waiting.splice(0, MOST_BATCHES_A_STATEMENT);
    // The statement serves every batch of the group, not only the request that happened to send it.
    void outsideRequests(() => this.#send(group)).finally(() => {
      this.#sending = false;
      this.#sendWaiting();
    });
  }

  /** Settles every batch of the group: each with its outcome, or all with the statement's error. */
  async #send(group: readonly Waiting[]): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.store.rows<Row>(
        batchesKeepingNothing({
          users: group.map((w) => w.batch.userId),
          partners: group.map((w) => w.batch.partnerId),
          ids: group.flatMap((w) => w.batch.acceptedIds),
          idCounts: group.map((w) => w.batch.acceptedIds.length),
        }),
      );
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, i) => {
      try {
        waiting.resolve(outcomeOf(rows[i], i + 1));
      } catch (error) {
        waiting.reject(error);
      }
    });
  }
}

const queues = new WeakMap<Store, NothingKeptWrites>();

/**
 * Writes a batch that keeps nothing (no kept items, at least one accepted id): the user's sync mark,
 * when none of its ids is stored and the user's row is free; otherwise nothing (`whole`).
 */
export function writeKeepingNothing(store: Store, batch: BatchWrite): Promise<NothingKeptOutcome> {
  let queue = queues.get(store);
  if (queue === undefined) {
    queue = new NothingKeptWrites(store);
    queues.set(store, queue);
  }
  return queue.write(batch);
}
