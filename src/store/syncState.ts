import { and, eq, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { users } from "./schema/index.ts";

export type SyncState = { hasSynced: boolean; lastSyncAt: Date };

/**
 * Closes a library scan (docs/api.md §6) in one atomic statement, so concurrent batches and calls never
 * lose an update: `has_synced` only ever turns true (from a positive count, or, when the count is
 * omitted, from items received since the previous close); `last_sync_at` is a high-water mark that
 * every call advances; and the received flag is reset so the next scan starts from nothing. Null when
 * the partner has no such user.
 */
export async function completeSync(
  store: Store,
  partnerId: string,
  userId: string,
  photosProcessed: number | null,
): Promise<SyncState | null> {
  const scanFoundMedia =
    photosProcessed === null ? sql`${users.receivedSinceSync}` : sql`${photosProcessed > 0}::boolean`;
  const [row] = await store.db
    .update(users)
    .set({
      hasSynced: sql`${users.hasSynced} or ${scanFoundMedia}`,
      // docs/api.md §6: a second call advances last_sync_at again, so the mark moves past the stored one
      // by at least the millisecond a response shows, even for two calls within one millisecond.
      lastSyncAt: sql`greatest(now(), date_trunc('milliseconds', ${users.lastSyncAt}) + interval '1 millisecond')`,
      receivedSinceSync: false,
      revision: sql`${users.revision} + 1`,
    })
    .where(and(eq(users.id, userId), eq(users.partnerId, partnerId)))
    .returning({ hasSynced: users.hasSynced, lastSyncAt: users.lastSyncAt });
  if (!row) return null;
  if (row.lastSyncAt === null) throw new Error("last_sync_at is null right after being set");
  return { hasSynced: row.hasSynced, lastSyncAt: row.lastSyncAt };
}
