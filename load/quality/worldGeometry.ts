import { EARTH_RADIUS_M } from "../../src/shards/geo.ts";
import type { MatchSettings } from "../../src/shards/matcher.ts";
import type { VenueKind, WorldVenue } from "./worldModel.ts";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const YEAR_START = Date.UTC(2025, 0, 1);
export const DAYS = 365;

export type Rng = () => number;

function gaussian(next: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

/** The point `northM`, `eastM` metres from a place (flat-earth: fine over a few kilometres). */
function offset(latitude: number, longitude: number, northM: number, eastM: number): [number, number] {
  const lat = latitude + (northM / EARTH_RADIUS_M) * (180 / Math.PI);
  const lng = longitude + (eastM / (EARTH_RADIUS_M * Math.cos((latitude * Math.PI) / 180))) * (180 / Math.PI);
  return [lat, lng];
}

/** A point at a given distance and a random bearing. */
export function atDistance(next: Rng, latitude: number, longitude: number, metres: number): [number, number] {
  const bearing = next() * 2 * Math.PI;
  return offset(latitude, longitude, metres * Math.cos(bearing), metres * Math.sin(bearing));
}

export function scatter(next: Rng, latitude: number, longitude: number, sigmaM: number): [number, number] {
  return offset(latitude, longitude, gaussian(next) * sigmaM, gaussian(next) * sigmaM);
}

export const int = (next: Rng, low: number, high: number) => low + Math.floor(next() * (high - low + 1));
export const pick = <T>(next: Rng, list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;

/** Distinct days of the year, sorted. */
export function days(next: Rng, count: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, DAYS)) chosen.add(Math.floor(next() * DAYS));
  return [...chosen].sort((a, b) => a - b);
}

export type City = { latitude: number; longitude: number; utcOffsetHours: number };

/** A local wall-clock time in a city as an instant. */
export const instant = (city: City, day: number, localHour: number) =>
  YEAR_START + day * DAY_MS + Math.round((localHour - city.utcOffsetHours) * HOUR_MS);

/** The local day of the year an instant falls on in a city: the inverse of `instant`'s day. */
export const dayOf = (city: City, atMs: number) =>
  Math.floor((atMs - YEAR_START + city.utcOffsetHours * HOUR_MS) / DAY_MS);

/** The local hour of the day an instant falls at in a city. */
export const hourOf = (city: City, atMs: number) =>
  (atMs - YEAR_START + city.utcOffsetHours * HOUR_MS - dayOf(city, atMs) * DAY_MS) / HOUR_MS;

/**
 * Metres from a venue's point to the edge of its stands or hall: where its audience sits. Homes and
 * workplaces are never inside it.
 */
export const FOOTPRINT_M: Record<VenueKind, number> = {
  stadium: 130,
  arena: 70,
  club: 25,
  theatre: 30,
  festival: 250,
};

export function radiusOf(venue: WorldVenue, settings: MatchSettings): number {
  return venue.radiusM ?? settings.radiusM;
}
