import { type EventStatus, MATCHABLE_STATUSES } from "../eventStatus.ts";
import {
  arrayAt,
  coordinate,
  type FeedEvent,
  type FeedPage,
  type FeedPerformer,
  type FeedVenue,
  flagAt,
  isObject,
  type JsonObject,
  localDateTime,
  localOfInstant,
  memberAt,
  NotAnAnswer,
  objectAt,
  requiredId,
  requiredName,
  textAt,
  usablePoint,
  venueZone,
} from "./feedPage.ts";

/**
 * One answer page of the Ticketmaster Discovery API v2 event search (`GET /discovery/v2/events`), read
 * with the fields docs/operations.md §3 lists: `_embedded.events[]`, each with `dates`, `classifications`
 * and `_embedded.venues[]` / `_embedded.attractions[]`. An empty result page has `page` and no `_embedded`.
 * The documentation's response structure names the venues `_embedded.venue[]`, so that name is read too.
 */

const STATUSES: Record<string, EventStatus> = {
  onsale: "scheduled",
  offsale: "scheduled",
  canceled: "cancelled",
  cancelled: "cancelled",
  postponed: "postponed",
  rescheduled: "rescheduled",
};

/** The most specific name of a classification list: the primary entry's genre, else its segment. */
function category(classifications: unknown[]): string | null {
  const primary = classifications.find((c) => flagAt(c, "primary")) ?? classifications[0];
  for (const level of ["genre", "segment"]) {
    const name = textAt(objectAt(primary, level), "name");
    if (name !== null && name !== "Undefined") return name;
  }
  return null;
}

/** `zone`: the event's `dates.timezone`, the feed's zone for a venue that names none. */
function venueOf(venue: JsonObject, zone: string | null, place: string): FeedVenue | null {
  const location = objectAt(venue, "location");
  const latitude = coordinate(memberAt(location, "latitude"), 90);
  const longitude = coordinate(memberAt(location, "longitude"), 180);
  const key = requiredId(venue, place);
  if (latitude === null || longitude === null || !usablePoint(latitude, longitude)) return null;
  const state = objectAt(venue, "state");
  return {
    key,
    name: requiredName(venue, "name", place),
    city: textAt(objectAt(venue, "city"), "name"),
    region: textAt(state, "stateCode") ?? textAt(state, "name"),
    country: textAt(objectAt(venue, "country"), "countryCode"),
    latitude,
    longitude,
    timezone: venueZone(textAt(venue, "timezone") ?? zone, latitude, longitude),
  };
}

/**
 * An event's `place` (an address and a point, for an event at no venue Ticketmaster lists) as a venue of
 * its own, keyed by its coordinates, so every import of the same place meets one venue; named by the
 * place, else its first address line, area or city.
 */
function placeOf(event: JsonObject, zone: string | null): FeedVenue | null {
  const place = objectAt(event, "place");
  const location = objectAt(place, "location");
  const latitude = coordinate(memberAt(location, "latitude"), 90);
  const longitude = coordinate(memberAt(location, "longitude"), 180);
  if (latitude === null || longitude === null || !usablePoint(latitude, longitude)) return null;
  const city = textAt(objectAt(place, "city"), "name");
  const state = objectAt(place, "state");
  return {
    key: `place:${latitude},${longitude}`,
    name:
      textAt(place, "name") ??
      textAt(objectAt(place, "address"), "line1") ??
      textAt(objectAt(place, "area"), "name") ??
      city ??
      `${latitude}, ${longitude}`,
    city,
    region: textAt(state, "stateCode") ?? textAt(state, "name"),
    country: textAt(objectAt(place, "country"), "countryCode"),
    latitude,
    longitude,
    timezone: venueZone(zone, latitude, longitude),
  };
}

function performerOf(attraction: JsonObject, eventCategory: string | null, place: string): FeedPerformer {
  const image = arrayAt(attraction, "images").find(isObject);
  return {
    key: requiredId(attraction, place),
    name: requiredName(attraction, "name", place),
    category: category(arrayAt(attraction, "classifications")) ?? eventCategory,
    // The documented structure also shows a single `image` object beside the `images` list.
    imageUrl: textAt(image, "url") ?? textAt(objectAt(attraction, "image"), "url"),
  };
}

/** `_embedded.venues[]`, or `_embedded.venue[]` as the documented response structure spells it. */
function venueList(inner: JsonObject | null): unknown[] {
  return Array.isArray(memberAt(inner, "venues")) ? arrayAt(inner, "venues") : arrayAt(inner, "venue");
}

/** `startsAtLocal` null: the page gives no start date (a date still to be announced has none). */
type When = Pick<FeedEvent, "endsAtLocal" | "status" | "timeUnknown"> & { startsAtLocal: string | null };

/**
 * A `start` or `end` as local date and time at the venue: `localDate` and `localTime` as written, and
 * what is missing of them read from `dateTime` (UTC); `time` null when neither gives one.
 */
function localParts(at: JsonObject | null, zone: string): { date: string | null; time: string | null } {
  const fromInstant = localOfInstant(textAt(at, "dateTime"), zone);
  const date = textAt(at, "localDate") ?? fromInstant?.slice(0, 10) ?? null;
  const sameDay = fromInstant !== null && fromInstant.slice(0, 10) === date;
  return { date, time: textAt(at, "localTime") ?? (sameDay ? fromInstant.slice(11, 19) : null) };
}

/**
 * `dates`: the start, a multi-day event's end, the status, and what is still to be announced, in the
 * venue's zone (`dateTime` is UTC: it fills in a local date or time the page leaves out).
 */
function whenOf(dates: JsonObject | null, zone: string): When {
  const start = objectAt(dates, "start");
  const code = textAt(objectAt(dates, "status"), "code")?.toLowerCase() ?? "onsale";
  let status = STATUSES[code] ?? "scheduled";
  const dateOpen = flagAt(start, "dateTBD") || flagAt(start, "dateTBA");
  if (dateOpen && status !== "cancelled") status = "date_tbd";
  const begins = localParts(start, zone);
  const timeUnknown =
    dateOpen || flagAt(start, "timeTBA") || flagAt(start, "noSpecificTime") || begins.time === null;
  const startsAtLocal = localDateTime(begins.date, timeUnknown ? null : begins.time);
  if (startsAtLocal === null) return { startsAtLocal, endsAtLocal: null, status, timeUnknown };
  const end = objectAt(dates, "end");
  const ends = localParts(end, zone);
  const endTime = timeUnknown || flagAt(end, "noSpecificTime") ? null : ends.time;
  const endsAtLocal = localDateTime(ends.date, endTime ?? "23:59:59");
  return {
    startsAtLocal,
    endsAtLocal: endsAtLocal !== null && endsAtLocal > startsAtLocal ? endsAtLocal : null,
    status,
    timeUnknown,
  };
}

export function readTicketmasterPage(page: unknown, place: string): FeedPage {
  if (!isObject(page) || (!isObject(memberAt(page, "_embedded")) && !isObject(memberAt(page, "page")))) {
    throw new NotAnAnswer(place, `not a Ticketmaster Discovery event search answer (no _embedded.events)`);
  }
  const embedded = memberAt(page, "_embedded");
  if (isObject(embedded) && !Array.isArray(memberAt(embedded, "events"))) {
    throw new NotAnAnswer(place, `_embedded.events: expected an array`);
  }
  const read: FeedPage = { venues: [], performers: [], events: [], undated: [], skipped: [] };
  arrayAt(embedded, "events").forEach((event, index) => {
    const at = `${place} events[${index}]`;
    if (!isObject(event)) throw new NotAnAnswer(at, `expected an object`);
    const key = requiredId(event, at);
    const name = requiredName(event, "name", at);
    const inner = objectAt(event, "_embedded");
    const dates = objectAt(event, "dates");
    const zone = textAt(dates, "timezone");
    const venues: FeedVenue[] = [];
    for (const venue of venueList(inner)) {
      if (!isObject(venue)) throw new NotAnAnswer(at, `_embedded.venues: expected objects`);
      const usable = venueOf(venue, zone, at);
      if (usable === null) {
        read.skipped.push({ place: at, message: `venue ${requiredId(venue, at)} has no usable coordinates` });
      } else venues.push(usable);
    }
    const ownPlace = venues.length === 0 ? placeOf(event, zone) : null;
    if (ownPlace !== null) venues.push(ownPlace);
    read.venues.push(...venues);
    const eventCategory = category(arrayAt(event, "classifications"));
    const performers = arrayAt(inner, "attractions")
      .filter(isObject)
      .map((attraction) => performerOf(attraction, eventCategory, at));
    read.performers.push(...performers);
    // Several venues: the event is placed at the first one with coordinates, else at its place
    // (docs/operations.md §3).
    const venue = venues[0];
    if (venue === undefined) {
      read.skipped.push({ place: at, message: `event ${key} skipped: no venue with usable coordinates` });
      return;
    }
    const { startsAtLocal, endsAtLocal, status, timeUnknown } = whenOf(dates, venue.timezone);
    const billed = performers.map((p, i) => ({ key: p.key, isHeadliner: i === 0 }));
    const facts = { key, name, venueKey: venue.key, status, performers: billed, place: at };
    if (startsAtLocal !== null) read.events.push({ ...facts, startsAtLocal, endsAtLocal, timeUnknown });
    // A show with no date that is not to be matched still tells a stored event its new status.
    else if (!MATCHABLE_STATUSES.includes(status)) read.undated.push(facts);
    else read.skipped.push({ place: at, message: `event ${key} skipped: no start date` });
  });
  return read;
}
