import { sql } from "drizzle-orm";
import { type ItemScore, scoreItem } from "../confidence/confidence.ts";
import type { MatchSettings } from "../shards/matcher.ts";
import { booleanParam } from "./batchInput.ts";
import { inCore, userConfidenceUpdate } from "./confidenceSql.ts";
import { ATTENDANCE_COPIES_LOCK, type Store } from "./db.ts";

/**
 * Match confidence for what a batch has not computed (docs/api.md §15): items kept before confidence
 * existed have no weight or spot, and their history rows no confidence, until a batch touches the event.
 * This fills them in, one user per transaction under the user's row lock (the lock batches take): each
 * item without a weight is placed with the item rule of src/confidence, as matching places it; the
 * user's spot rows are counted again from the items; and every history row is scored by the definition
 * the batch statement scores with (`userConfidenceUpdate`, src/store/confidenceSql.ts).
 *
 * With `replace`, every item is placed again against the catalog as it is now: a catalog import that
 * moved an event's start or venue leaves the weights of the items matched before it as they were (as it
 * leaves the matches, docs/api.md §5); this brings them up to date, and gives the items kept in the
 * core before in-core items had spot cells their cell, so the spots at the core's edge count them.
 */

type ItemRow = {
  media_id: string;
  event_id: number;
  venue_id: number;
  latitude: number;
  longitude: number;
  taken_ms: number;
  starts_ms: number;
  ends_ms: number | null;
  venue_latitude: number;
  venue_longitude: number;
  radius_m: number | null;
};

export type BackfillCounts = { users: number; items: number; events: number };

/** The users with a history row or a kept item confidence has not reached (all users with `replace`). */
async function usersToFill(store: Store, replace: boolean): Promise<string[]> {
  const rows = await store.rows<{ user_id: string }>(
    replace
      ? sql`select distinct user_id from user_events`
      : sql`select user_id from user_events where confidence is null
            union select user_id from media where weight is null`,
  );
  return rows.map((row) => row.user_id);
}

/** An item's weight, spot cell and core flag worked out from the catalog's facts as they are now. */
function place(row: ItemRow, settings: MatchSettings): ItemScore & { mediaId: string } {
  const score = scoreItem(
    {
      latitude: row.latitude,
      longitude: row.longitude,
      takenAtMs: row.taken_ms,
      startsAtMs: row.starts_ms,
      endsAtMs: row.ends_ms,
      venue: { latitude: row.venue_latitude, longitude: row.venue_longitude, radiusM: row.radius_m },
    },
    settings,
  );
  return { mediaId: row.media_id, ...score };
}

/** One user's weights, spots and confidences, in one transaction under the user's row lock. */
async function fillUser(
  store: Store,
  userId: string,
  settings: MatchSettings,
  replace: boolean,
): Promise<{ items: number; events: number }> {
  return store.transaction(async (tx) => {
    await tx.rows(sql`select pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8)`);
    await tx.rows(sql`select id from users where id = ${userId}::uuid for update`);
    // Milliseconds multiplied out in numeric, then cast: the exact instant a batch measured the item at,
    // where seconds cast first and multiplied in float8 can land a unit in the last place beside it.
    // The items are reached through the user's history rows, as userConfidenceUpdate reaches them.
    const rows = await tx.rows<ItemRow>(
      sql`
      select m.media_id, m.event_id, m.venue_id, m.latitude, m.longitude,
             (extract(epoch from m.taken_at) * 1000)::float8 as taken_ms,
             (extract(epoch from e.starts_at) * 1000)::float8 as starts_ms,
             (extract(epoch from e.ends_at) * 1000)::float8 as ends_ms,
             v.latitude as venue_latitude, v.longitude as venue_longitude, v.radius_m
      from user_events ue
      join events e on e.id = ue.event_id
      join media m on m.user_id = ue.user_id and m.event_id = ue.event_id
      join venues v on v.id = m.venue_id
      where ue.user_id = ${userId}::uuid and (${replace}::boolean or m.weight is null)`,
    );
    const placed = rows.map((row) => place(row, settings));
    if (placed.length > 0) {
      await tx.rows(
        sql`
        update media m
        set weight = u.weight, spot_row = u.spot_row, spot_col = u.spot_col, in_core = u.in_core
        from unnest(${sql.param(placed.map((i) => i.mediaId))}::text[],
                    ${sql.param(placed.map((i) => i.weight))}::float8[],
                    ${sql.param(placed.map((i) => i.spot.row))}::int[],
                    ${sql.param(placed.map((i) => i.spot.column))}::int[],
                    ${sql.param(placed.map((i) => booleanParam(i.inCore)))}::text[]::bool[])
          as u(media_id, weight, spot_row, spot_col, in_core)
        where m.user_id = ${userId}::uuid and m.media_id = u.media_id`,
      );
    }
    // The spot rows as the batches would have left them: one per (cell, event), counting its items and
    // those of them in the core.
    await tx.rows(sql`delete from user_venue_spots where user_id = ${userId}::uuid`);
    await tx.rows(
      sql`
      insert into user_venue_spots (user_id, venue_id, spot_row, spot_col, event_id, items, core_items)
      select m.user_id, m.venue_id, m.spot_row, m.spot_col, m.event_id, count(*)::int,
             count(*) filter (where ${inCore(sql`m`)})::int
      from user_events ue join media m on m.user_id = ue.user_id and m.event_id = ue.event_id
      where ue.user_id = ${userId}::uuid and m.spot_row is not null
      group by m.user_id, m.venue_id, m.spot_row, m.spot_col, m.event_id`,
    );
    const scored = await tx.rows(userConfidenceUpdate(userId, settings.defaultDurationMinutes));
    return { items: placed.length, events: scored.length };
  });
}

/**
 * Fills in the confidence of every user whose items or history rows lack it (with `replace`, of every
 * user, every item placed again). Users are done one by one, each in its own short transaction, so
 * batches go on meanwhile; `progress` hears of each user done.
 */
export async function backfillConfidence(
  store: Store,
  settings: MatchSettings,
  options: { replace: boolean; progress?: (done: number, total: number) => void },
): Promise<BackfillCounts> {
  const users = await usersToFill(store, options.replace);
  const counts: BackfillCounts = { users: 0, items: 0, events: 0 };
  for (const userId of users) {
    const done = await fillUser(store, userId, settings, options.replace);
    counts.users++;
    counts.items += done.items;
    counts.events += done.events;
    options.progress?.(counts.users, users.length);
  }
  return counts;
}
