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
 * One answer page of the SeatGeek Platform API events endpoint (`GET /2/events`), read with the fields
 * docs/operations.md §3 lists: `events[]`, each with `datetime_local`, `time_tbd`, `date_tbd`, `status`,
 * `enddatetime_utc`, `venue` and `performers[]`; `meta` holds the paging.
 */

const STATUSES: Record<string, EventStatus> = {
  normal: "scheduled",
  contingent: "scheduled",
  rescheduled: "rescheduled",
  postponed: "postponed",
  cancelled: "cancelled",
  canceled: "cancelled",
};

function venueOf(venue: JsonObject, place: string): FeedVenue | null {
  const location = objectAt(venue, "location");
  const latitude = coordinate(memberAt(location, "lat"), 90);
  const longitude = coordinate(memberAt(location, "lon"), 180);
  const key = requiredId(venue, place);
  if (latitude === null || longitude === null || !usablePoint(latitude, longitude)) return null;
  return {
    key,
    name: requiredName(venue, "name", place),
    city: textAt(venue, "city"),
    region: textAt(venue, "state"),
    country: textAt(venue, "country"),
    latitude,
    longitude,
    timezone: venueZone(textAt(venue, "timezone"), latitude, longitude),
  };
}

/** The primary genre's name, else the first genre's, else the first taxonomy's. */
function category(performer: JsonObject): string | null {
  const genres = arrayAt(performer, "genres");
  const genre = genres.find((g) => flagAt(g, "primary")) ?? genres[0];
  return textAt(genre, "name") ?? textAt(arrayAt(performer, "taxonomies")[0], "name");
}

function performerOf(performer: JsonObject, place: string): FeedPerformer {
  return {
    key: requiredId(performer, place),
    name: requiredName(performer, "name", place),
    category: category(performer),
    imageUrl: textAt(performer, "image"),
  };
}

type When = Pick<FeedEvent, "startsAtLocal" | "endsAtLocal" | "timeUnknown">;

/** The page's status; a date still to be announced (`date_tbd`) is one, unless the show is cancelled. */
function statusOf(event: JsonObject): EventStatus {
  const status = STATUSES[textAt(event, "status")?.toLowerCase() ?? "normal"] ?? "scheduled";
  return flagAt(event, "date_tbd") && status !== "cancelled" ? "date_tbd" : status;
}

/**
 * With `time_tbd`, `datetime_local` holds the right date and a placeholder time (03:30), which is
 * dropped; with `date_tbd` the date itself is an estimate. A page without `datetime_local` has the start
 * read from `datetime_utc` in the venue's zone.
 */
function whenOf(event: JsonObject, zone: string): When | null {
  const local = textAt(event, "datetime_local") ?? localOfInstant(textAt(event, "datetime_utc"), zone);
  const date = local === null ? null : local.slice(0, 10);
  const timeUnknown = flagAt(event, "date_tbd") || flagAt(event, "time_tbd") || flagAt(event, "datetime_tbd");
  const startsAtLocal = localDateTime(date, timeUnknown || local === null ? null : local.slice(11, 19));
  if (startsAtLocal === null) return null;
  const end = localOfInstant(textAt(event, "enddatetime_utc"), zone);
  const endsAtLocal = end === null ? null : timeUnknown ? `${end.slice(0, 10)}T23:59:59` : end;
  return {
    startsAtLocal,
    endsAtLocal: endsAtLocal !== null && endsAtLocal > startsAtLocal ? endsAtLocal : null,
    timeUnknown,
  };
}

export function readSeatGeekPage(page: unknown, place: string): FeedPage {
  if (!isObject(page) || !Array.isArray(memberAt(page, "events"))) {
    throw new NotAnAnswer(place, `not a SeatGeek events answer (no events array)`);
  }
  const read: FeedPage = { venues: [], performers: [], events: [], undated: [], skipped: [] };
  arrayAt(page, "events").forEach((event, index) => {
    const at = `${place} events[${index}]`;
    if (!isObject(event)) throw new NotAnAnswer(at, `expected an object`);
    const key = requiredId(event, at);
    const name = requiredName(event, "title", at);
    const venueObject = objectAt(event, "venue");
    if (venueObject === null) throw new NotAnAnswer(at, `venue: expected an object`);
    const venue = venueOf(venueObject, at);
    const performers = arrayAt(event, "performers")
      .filter(isObject)
      .map((performer) => ({ performer: performerOf(performer, at), primary: flagAt(performer, "primary") }));
    read.performers.push(...performers.map((p) => p.performer));
    if (venue === null) {
      const venueKey = requiredId(venueObject, at);
      read.skipped.push({ place: at, message: `venue ${venueKey} has no usable coordinates` });
      read.skipped.push({ place: at, message: `event ${key} skipped: no venue with usable coordinates` });
      return;
    }
    read.venues.push(venue);
    const when = whenOf(event, venue.timezone);
    const billed = performers.map((p) => ({ key: p.performer.key, isHeadliner: p.primary }));
    const facts = { key, name, venueKey: venue.key, status: statusOf(event), performers: billed, place: at };
    if (when !== null) read.events.push({ ...facts, ...when });
    // A show with no date that is not to be matched still tells a stored event its new status.
    else if (!MATCHABLE_STATUSES.includes(facts.status)) read.undated.push(facts);
    else read.skipped.push({ place: at, message: `event ${key} skipped: no start date` });
  });
  return read;
}
