import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { eventPerformers, events, media, performers, userEvents, venues } from "./schema/index.ts";

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

function groupBy<T>(rows: readonly T[], key: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

function loadEvents(store: Store, eventIds: number[]) {
  return store.db
    .select({
      id: events.id,
      name: events.name,
      startsAtLocal: events.startsAtLocal,
      venue: {
        id: venues.id,
        name: venues.name,
        city: venues.city,
        region: venues.region,
        country: venues.country,
        latitude: venues.latitude,
        longitude: venues.longitude,
      },
    })
    .from(events)
    .innerJoin(venues, eq(venues.id, events.venueId))
    .where(inArray(events.id, eventIds));
}

/** Headliners first, then the catalog's billing order; the performer id settles anything left. */
function loadPerformers(store: Store, eventIds: number[]) {
  return store.db
    .select({
      eventId: eventPerformers.eventId,
      id: performers.id,
      name: performers.name,
      category: performers.category,
      imageUrl: performers.imageUrl,
      isHeadliner: eventPerformers.isHeadliner,
    })
    .from(eventPerformers)
    .innerJoin(performers, eq(performers.id, eventPerformers.performerId))
    .where(inArray(eventPerformers.eventId, eventIds))
    .orderBy(
      desc(sql`coalesce(${eventPerformers.isHeadliner}, false)`),
      asc(eventPerformers.position),
      asc(performers.id),
    );
}

/** One range scan of media_user_event_idx per event, oldest capture first, the id breaking ties. */
function loadMedia(store: Store, userId: string, eventIds: number[]) {
  return store.db
    .select({
      eventId: media.eventId,
      mediaId: media.mediaId,
      takenAt: media.takenAt,
      mediaType: media.mediaType,
      thumbnailUrl: media.thumbnailUrl,
    })
    .from(media)
    .where(and(eq(media.userId, userId), inArray(media.eventId, eventIds)))
    .orderBy(asc(media.takenAt), asc(media.mediaId));
}

function loadCounts(store: Store, userId: string, eventIds: number[]) {
  return store.db
    .select({ eventId: userEvents.eventId, mediaCount: userEvents.mediaCount })
    .from(userEvents)
    .where(and(eq(userEvents.userId, userId), inArray(userEvents.eventId, eventIds)));
}

/**
 * Expands events for a user, in the order of `eventIds`, with a fixed number of queries whatever the
 * page size: events with venues, performers, and either the user's media or only its counts. With media
 * the count is the length of the list, so a response never contradicts itself under concurrent batches.
 * Ids of events that do not exist are skipped.
 */
export async function loadEventDetails(
  store: Store,
  userId: string,
  eventIds: readonly number[],
  options: { includeMedia: boolean },
): Promise<EventDetail[]> {
  if (eventIds.length === 0) return [];
  const ids = [...eventIds];
  const [eventRows, performerRows, mediaRows, countRows] = await Promise.all([
    loadEvents(store, ids),
    loadPerformers(store, ids),
    options.includeMedia ? loadMedia(store, userId, ids) : Promise.resolve([]),
    options.includeMedia ? Promise.resolve([]) : loadCounts(store, userId, ids),
  ]);
  const byId = new Map(eventRows.map((row) => [row.id, row]));
  const performersOf = groupBy(performerRows, (row) => row.eventId);
  const mediaOf = groupBy(mediaRows, (row) => row.eventId);
  const countOf = new Map(countRows.map((row) => [row.eventId, row.mediaCount]));
  return ids.flatMap((id) => {
    const event = byId.get(id);
    if (!event) return [];
    const kept = options.includeMedia ? (mediaOf.get(id) ?? []) : null;
    return [
      {
        id: event.id,
        name: event.name,
        startsAtLocal: event.startsAtLocal,
        venue: event.venue,
        performers: (performersOf.get(id) ?? []).map((p) => ({
          id: p.id,
          name: p.name,
          category: p.category,
          imageUrl: p.imageUrl,
          isHeadliner: p.isHeadliner,
        })),
        mediaCount: kept === null ? (countOf.get(id) ?? 0) : kept.length,
        media:
          kept === null
            ? null
            : kept.map((m) => ({
                mediaId: m.mediaId,
                takenAt: m.takenAt,
                mediaType: m.mediaType,
                thumbnailUrl: m.thumbnailUrl,
              })),
      },
    ];
  });
}
