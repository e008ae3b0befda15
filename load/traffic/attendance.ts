import type { IndexEvent, IndexVenue, MatchSettings } from "../../src/shards/matcher.ts";
import type { Random } from "../../src/store/catalog/generate/random.ts";

/**
 * How people attend events, shared by the traffic generator (photos sent over HTTP) and the data-scale
 * seeder (kept media written straight to PostgreSQL), so both describe the same users.
 */

export type Point = { latitude: number; longitude: number };

const MINUTE_MS = 60_000;
const METRES_PER_DEGREE = 111_320;

/** Share of items taken at an event that are videos (elsewhere it is lower). */
export const VIDEO_SHARE_AT_EVENTS = 0.2;

/** A point `metres` away from `from` on `bearing` (radians); flat-earth, fine at city scale. */
export function offset(from: Point, metres: number, bearing: number): Point {
  const latitude = from.latitude + (metres * Math.cos(bearing)) / METRES_PER_DEGREE;
  const scale = METRES_PER_DEGREE * Math.max(0.01, Math.cos((from.latitude * Math.PI) / 180));
  const longitude = from.longitude + (metres * Math.sin(bearing)) / scale;
  return { latitude: Math.max(-89.9, Math.min(89.9, latitude)), longitude: ((longitude + 540) % 360) - 180 };
}

/** Events a user attends per year of camera roll: one to six. */
export function eventsPerYear(random: Random): number {
  return random.int(1, 6);
}

/** Photos and videos taken at one event: two to forty, most people taking a handful. */
export function burstSize(random: Random): number {
  return 2 + Math.floor(38 * random.float() ** 2);
}

/**
 * A capture instant at the event, from half an hour before the start to three hours in, clipped to the
 * match window of docs/api.md §5 so that it always matches.
 */
export function timeAtEvent(random: Random, event: IndexEvent, settings: MatchSettings): number {
  const end = event.endsAtMs ?? event.startsAtMs + settings.defaultDurationMinutes * MINUTE_MS;
  const earliest = event.startsAtMs - Math.min(30, settings.beforeMinutes) * MINUTE_MS;
  const latest = Math.min(event.startsAtMs + 180 * MINUTE_MS, end + settings.afterMinutes * MINUTE_MS);
  return earliest + Math.floor(random.float() * (latest - earliest));
}

/** A point uniformly spread over the inner 60% of the venue's match radius (haversine-safe margin). */
export function placeAtVenue(random: Random, venue: IndexVenue, settings: MatchSettings): Point {
  const radius = venue.radiusM ?? settings.radiusM;
  return offset(venue, 0.6 * radius * Math.sqrt(random.float()), random.float() * 2 * Math.PI);
}

/** Rounds a coordinate to the 6 decimals (about 0.1 m) a phone's EXIF carries. */
export function roundCoordinate(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
