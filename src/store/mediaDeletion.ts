import { type SQL, sql } from "drizzle-orm";
import { type BatchWrite, batchPlanSettings } from "./batchInput.ts";
import { ATTENDANCE_COPIES_LOCK, type Store } from "./db.ts";
import { batchStatement } from "./ingest.ts";

/** The ids of a deletion split by whether the user kept an item with that id (docs/api.md §16). */
export type MediaDeletion = { deleted: string[]; notFound: string[] };

/**
 * The user lookup and row lock of a deletion: the lock a batch takes in `open_user_batch`, and the
 * user's revision (src/store/standbyReads.ts), without moving the sync mark or the received-since-sync
 * flag (a deletion is not media received during a scan). The lock serialises the deletion with the
 * user's batches, which is what keeps the batch statement's count deltas exact.
 */
const lockedUser = (userId: string, partnerId: string): SQL =>
  sql`update users set revision = revision + 1
      where id = ${userId}::uuid and partner_id = ${partnerId} returning id`;

/**
 * Which of `ids` the user keeps, through the batch's own lookup (`media_replaced`, src/store/sql/media_replaced.sql): the
 * user's index range or one primary-key probe per id, whichever costs less for the user's library.
 */
const keptAmong = (userId: string, ids: readonly string[]): SQL =>
  sql`select replaced_media_id as media_id from media_replaced(${userId}::uuid, ${sql.param(ids)}::text[])`;

/** Whatever a batch of the user needs besides its items: the user, the partner, the matching settings. */
export type DeletionScope = Omit<BatchWrite, "acceptedIds" | "kept">;

/**
 * Deletes the user's kept items with these ids, atomically, or returns null, with nothing written,
 * when the partner has no such user.
 *
 * A deletion is the batch statement with every id accepted and nothing kept: exactly what a batch does
 * to an accepted item that no longer matches. So every table the batch keeps in step with `media`
 * (the history rows' counts, the stored media lists, whatever is derived from kept items) follows a
 * deletion by the same statement, and an event left without media keeps its history row with a zero
 * count and its hidden flag, as after a re-evaluation.
 *
 * ATTENDANCE_COPIES_LOCK is taken shared first, as a batch does: the batch statement refreshes the
 * history rows' copies of event facts, which a catalog import must not rewrite underneath it.
 */
export async function deleteMedia(
  store: Store,
  scope: DeletionScope,
  ids: readonly string[],
): Promise<MediaDeletion | null> {
  const distinct = [...new Set(ids)];
  const { userId, partnerId } = scope;
  return store.transaction(async (tx) => {
    await tx.rows(sql`select pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8)`);
    if ((await tx.rows(lockedUser(userId, partnerId))).length === 0) return null;
    const found = new Set(
      (await tx.rows<{ media_id: string }>(keptAmong(userId, distinct))).map((row) => row.media_id),
    );
    if (found.size > 0) {
      // As for a batch (src/store/ingest.ts): the statement's cached generic plan, which cannot scan `media`.
      await tx.rows(batchPlanSettings);
      await tx.rows(batchStatement({ ...scope, acceptedIds: [...found], kept: [] }));
    }
    return {
      deleted: distinct.filter((id) => found.has(id)),
      notFound: distinct.filter((id) => !found.has(id)),
    };
  });
}
