import { sql } from "drizzle-orm";
import { ATTENDANCE_COPIES_LOCK } from "./db.ts";
import { type BoundStatement, renderedOnce } from "./renderedStatement.ts";

/*
 * What a media batch hands the store (`writeBatch`, src/store/ingest.ts) and the statement that opens
 * every batch's transaction: the user's sync mark and row lock.
 */

/** A media item that matched a licensed event: the only kind of item the service keeps (docs/api.md §4). */
export type KeptMedia = {
  mediaId: string;
  eventId: number;
  venueId: number;
  /** UTC instant as RFC 3339 text; the database keeps microseconds. */
  takenAt: string;
  latitude: number;
  longitude: number;
  mediaType: "photo" | "video";
  filename: string | null;
  durationSeconds: number | null;
  thumbnailUrl: string | null;
  deviceMake: string | null;
  deviceModel: string | null;
  deviceLensModel: string | null;
  /** The item's spot cell against the venue (`spotCell`), null inside the venue's core. */
  spot?: { row: number; column: number } | null;
  /**
   * The item's confidence weight against the event (`itemWeight`). Every batch of the API sends it;
   * without it (fixtures that write media directly) the item counts toward its event's span only.
   */
  weight?: number;
};

export type BatchWrite = {
  userId: string;
  /** The partner whose key sent the batch: a user of another partner is no user at all. */
  partnerId: string;
  /** Every accepted id of the batch (unique). Those not in `kept` lose whatever match they had before. */
  acceptedIds: readonly string[];
  kept: readonly KeptMedia[];
  /**
   * MATCH_DEFAULT_DURATION_MINUTES, what an event without an end lasts for its confidence span; the
   * setting's default when not given.
   */
  defaultDurationMinutes?: number;
};

const syncMark = renderedOnce(
  ["userId", "partnerId", "writes"],
  ({
    userId,
    partnerId,
    writes,
  }) => sql`select mark_batch_sync(${userId}::uuid, ${partnerId}, ${writes}::boolean)
    as last_sync_ms
    from pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8) as copies_lock`,
);

/**
 * The user's sync mark and row lock, and the batch's user lookup: drizzle/0002_batch_sync_mark.sql.
 * It first takes ATTENDANCE_COPIES_LOCK shared (a function in FROM runs before the select list), before
 * any statement of the batch reads an event, so a catalog import's refresh of user_events waits for it.
 */
export function syncMarkStatement({ userId, partnerId, acceptedIds }: BatchWrite): BoundStatement {
  return syncMark({ userId, partnerId, writes: acceptedIds.length > 0 });
}

/** What `mark_batch_sync` raises when the partner has no such user. */
export const NO_SUCH_USER = "P0002";
