import { type SQL, sql } from "drizzle-orm";

export type VenueDetail = {
  id: number;
  name: string;
  city: string | null;
  region: string | null;
  country: string | null;
  latitude: number;
  longitude: number;
};

export type PerformerDetail = {
  id: number;
  name: string;
  category: string | null;
  imageUrl: string | null;
  isHeadliner: boolean | null;
};

export type EventMediaDetail = {
  mediaId: string;
  takenAt: Date;
  mediaType: "photo" | "video";
  thumbnailUrl: string | null;
};

/** An event as a user's history shows it: catalog facts plus what the user kept there. */
export type EventDetail = {
  id: number;
  name: string;
  startsAtLocal: string;
  venue: VenueDetail;
  performers: PerformerDetail[];
  mediaCount: number;
  /** Every item the user kept at the event, oldest first; null when the caller did not ask for media. */
  media: EventMediaDetail[] | null;
};

/** A kept item as PostgreSQL lists it: media id, capture instant in epoch milliseconds, type, thumbnail. */
type MediaTuple = [string, number, "photo" | "video", string | null];

/** An event as PostgreSQL builds it (see `eventJson`). */
export type EventJson = Omit<EventDetail, "media"> & { media: MediaTuple[] | null };

/** Headliners first, then the catalog's billing order; the performer id settles anything left. */
const performersJson = sql`
  (select coalesce(json_agg(json_build_object(
            'id', p.id, 'name', p.name, 'category', p.category, 'imageUrl', p.image_url,
            'isHeadliner', ep.is_headliner)
          order by coalesce(ep.is_headliner, false) desc, ep.position, p.id), '[]')
   from event_performers ep
   cross join lateral (
     select id, name, category, image_url from performers where id = ep.performer_id offset 0
   ) p
   where ep.event_id = e.id)`;

/**
 * One range scan of media_user_event_time_idx, oldest capture first, the id breaking ties in code-point
 * order (collate "C"), whatever the database's collation: an ICU database would otherwise put `a`
 * before `B` and answer in a different order than a database next to it. Items are arrays, not
 * objects: a page holds hundreds, and building an object per item was a fifth of the statement's
 * time. The instant goes out as whole epoch milliseconds, floored: what a JavaScript Date keeps of a
 * microsecond timestamp.
 */
const mediaJson = (userId: string) => sql`
  (select coalesce(json_agg(json_build_array(
            m.media_id, floor(extract(epoch from m.taken_at) * 1000), m.media_type, m.thumbnail_url)
          order by m.taken_at, m.media_id collate "C"), '[]')
   from media m where m.user_id = ${userId}::uuid and m.event_id = e.id)`;

/**
 * The JSON of one event for a user, as a scalar subquery on `eventId` (null when no such event):
 * catalog facts, the billing, and either the user's media or only its count. Built by PostgreSQL so a
 * whole page is one statement and one round trip, whatever its size. Catalog rows are read by primary
 * key through `offset 0` subqueries, which the planner never turns into joins over whole tables.
 */
export function eventJson(eventId: SQL, userId: string, includeMedia: boolean): SQL {
  const kept = includeMedia
    ? sql`'media', ${mediaJson(userId)}, 'mediaCount', 0`
    : sql`'media', null, 'mediaCount', coalesce(
        (select media_count from user_events where user_id = ${userId}::uuid and event_id = e.id), 0)`;
  return sql`
    (select json_build_object(
              'id', e.id, 'name', e.name, 'startsAtLocal', e.starts_at_local,
              'venue', json_build_object(
                'id', v.id, 'name', v.name, 'city', v.city, 'region', v.region, 'country', v.country,
                'latitude', v.latitude, 'longitude', v.longitude),
              'performers', ${performersJson},
              ${kept})
     from events e
     cross join lateral (
       select id, name, city, region, country, latitude, longitude from venues where id = e.venue_id offset 0
     ) v
     where e.id = ${eventId})`;
}

/** With media, the count is the length of the list, so a response never contradicts itself. */
export function toEventDetail(json: EventJson): EventDetail {
  const media =
    json.media === null
      ? null
      : json.media.map(([mediaId, takenAtMs, mediaType, thumbnailUrl]) => ({
          mediaId,
          takenAt: new Date(takenAtMs),
          mediaType,
          thumbnailUrl,
        }));
  return {
    id: json.id,
    name: json.name,
    startsAtLocal: json.startsAtLocal,
    venue: json.venue,
    performers: json.performers,
    mediaCount: media === null ? json.mediaCount : media.length,
    media,
  };
}

/**
 * Expands events for a user, in the order of `eventIds`, in one statement whatever their number: events
 * with venues, performers, and either the user's media or only its counts. Its rows go through
 * `eventDetailsOf`; ids of events that do not exist are skipped.
 */
export function eventDetailsQuery(userId: string, eventIds: readonly number[], includeMedia: boolean): SQL {
  return sql`
    select ${eventJson(sql`r.id`, userId, includeMedia)} as event
    from unnest(${sql.param([...eventIds])}::int[]) with ordinality as r(id, ord)
    order by r.ord`;
}

export type EventDetailsRow = { event: EventJson | null };

export function eventDetailsOf(rows: readonly EventDetailsRow[]): EventDetail[] {
  return rows.flatMap((row) => (row.event === null ? [] : [toEventDetail(row.event)]));
}
