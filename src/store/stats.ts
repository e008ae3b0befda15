import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { catalogVersion } from "./eventDetails.ts";
import { renderedOnce } from "./renderedStatement.ts";
import { fenced } from "./standbyReads.ts";

/** One visible event of the user, as user_events copies it, with the ids of the performers it bills. */
type VisibleEvent = {
  eventId: number;
  startsAtLocal: string;
  mediaCount: number;
  photoCount: number;
  videoCount: number;
  venueId: number;
  performerIds: number[];
};

/** What the stats are computed from: the user's sync state and visible events, read in one snapshot. */
export type StatsRows = {
  hasSynced: boolean;
  /** Null until the user's first batch or sync-complete. */
  lastSyncAt: Date | null;
  /** The catalog version the rows were read at: the venues and performers tallied must be of it. */
  catalogVersion: string;
  /** Ordered by start instant, then event id: the first is `first_event`, the last `latest_event`. */
  visible: VisibleEvent[];
  /** The names of the first and the latest visible event (null when there is none). */
  firstEventName: string | null;
  latestEventName: string | null;
};

/** The statement's row: each visible event as `[event_id, starts_at_local, media, photos, videos, venue, performers]`. */
type StatsRow = {
  has_synced: boolean;
  last_sync_ms: number | null;
  catalog_version: string;
  visible: [number, string, number, number, number, number, number[]][];
  first_event_name: string | null;
  latest_event_name: string | null;
};

/**
 * One statement, so every figure comes from the same snapshot and the answer is one round trip: the
 * partner's user row (no row for a user the partner does not have), the catalog version, the user's
 * visible events (docs/api.md §9: licensed, not hidden, with kept media) from user_events, whose copies of
 * each event's start, local start, venue and licence make that one index range over the user's own
 * rows, each with its billing from one index-only probe, and the names of the first and latest event.
 * The cost follows the user's event count, never the size of the catalog or of the media table.
 *
 * Venues and performers are not read here: looking each up by key cost more than the rest of the
 * statement (docs/performance.md §7), and they are few enough for the server to keep
 * (`VenuePerformerCache`).
 */
const statsRows = (onStandby: boolean) =>
  renderedOnce(["partnerId", "userId", "revision", "maxLagSeconds"], (s) => {
    const { partnerId, userId } = s;
    return sql`
    with visible as materialized (
      select event_id, starts_at, starts_at_local, media_count, photo_count, video_count, venue_id
      from user_events
      where user_id = ${userId} and media_count > 0 and not hidden and licensed
    )
    select
      u.has_synced,
      floor(extract(epoch from u.last_sync_at) * 1000)::float8 as last_sync_ms,
      ${catalogVersion} as catalog_version,
      (select coalesce(json_agg(json_build_array(
                v.event_id, v.starts_at_local, v.media_count, v.photo_count, v.video_count, v.venue_id,
                (select coalesce(array_agg(performer_id), '{}') from event_performers
                 where event_id = v.event_id))
              order by v.starts_at, v.event_id), '[]')
         from visible v) as visible,
      (select name from events
       where id = (select event_id from visible order by starts_at, event_id limit 1))
        as first_event_name,
      (select name from events
       where id = (select event_id from visible order by starts_at desc, event_id desc limit 1))
        as latest_event_name
    from users u
    where u.id = ${userId} and u.partner_id = ${partnerId} ${onStandby ? fenced(s) : sql``}
  `;
  });

/** The statement for the primary, and the one for a standby, behind a fence (standbyReads.ts). */
const onPrimary = statsRows(false);
const onStandby = statsRows(true);

/** The user's sync state and visible events, or null when the partner has no such user. */
export async function userStatsRows(
  store: Store,
  owner: { partnerId: string; userId: string },
): Promise<StatsRows | null> {
  // A single statement with no transaction around it: JIT, whose compile time would dwarf this short
  // read, is off for every connection of the store (see postgresDb.ts).
  const [row] = await store.readForUser<StatsRow>(owner, (fence) =>
    fence === null
      ? onPrimary({ ...owner, revision: null, maxLagSeconds: null })
      : onStandby({ ...owner, ...fence }),
  );
  if (!row) return null;
  return {
    hasSynced: row.has_synced,
    lastSyncAt: row.last_sync_ms === null ? null : new Date(row.last_sync_ms),
    catalogVersion: row.catalog_version,
    visible: row.visible.map(
      ([eventId, startsAtLocal, mediaCount, photoCount, videoCount, venueId, performerIds]) => ({
        eventId,
        startsAtLocal,
        mediaCount,
        photoCount,
        videoCount,
        venueId,
        performerIds,
      }),
    ),
    firstEventName: row.first_event_name,
    latestEventName: row.latest_event_name,
  };
}
