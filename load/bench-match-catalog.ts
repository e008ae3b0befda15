import { type CatalogColumns, emptyColumns } from "../src/shards/columns.ts";
import { EARTH_RADIUS_M } from "../src/shards/geo.ts";
import type { MatchQuery } from "../src/shards/matcher.ts";

/**
 * A synthetic catalog for the matching benchmark, generated straight into columns so 10 million events
 * fit in memory: venues clustered in cities (Gaussian, σ = 6 km), one venue per 50 events, ten years
 * of evening events, radii mostly the default. Deterministic for a seed.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const FIRST_DAY = Date.UTC(2016, 0, 1);
const YEARS = 10;
export const EVENTS_PER_VENUE = 50;
const VENUES_PER_CITY = 120;

/** mulberry32: small, fast and good enough for spreading points. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

function around(next: () => number, lat: number, lng: number, sigmaM: number): [number, number] {
  const dLat = ((gaussian(next) * sigmaM) / EARTH_RADIUS_M) * (180 / Math.PI);
  const dLng = dLat === 0 ? 0 : ((gaussian(next) * sigmaM) / EARTH_RADIUS_M) * (180 / Math.PI);
  const latitude = Math.max(-89.9, Math.min(89.9, lat + dLat));
  let longitude = lng + dLng / Math.cos((latitude * Math.PI) / 180);
  if (longitude > 180) longitude -= 360;
  if (longitude < -180) longitude += 360;
  return [latitude, longitude];
}

export type BenchCatalog = { columns: CatalogColumns; cities: [number, number][] };

export function generateCatalog(events: number, seed: number): BenchCatalog {
  const next = random(seed);
  const venueCount = Math.max(1, Math.round(events / EVENTS_PER_VENUE));
  const cities: [number, number][] = Array.from(
    { length: Math.max(5, Math.ceil(venueCount / VENUES_PER_CITY)) },
    () => [-50 + next() * 115, -180 + next() * 360],
  );
  const columns = emptyColumns(venueCount, events);
  for (let v = 0; v < venueCount; v++) {
    const city = cities[Math.floor(next() * cities.length)] ?? [0, 0];
    const [latitude, longitude] = around(next, city[0], city[1], 6000);
    const kind = next();
    columns.venueIds[v] = v + 1;
    columns.venueLatitudes[v] = latitude;
    columns.venueLongitudes[v] = longitude;
    columns.venueRadii[v] =
      kind < 0.7
        ? Number.NaN
        : kind < 0.95
          ? 100 + Math.floor(next() * 900)
          : 1000 + Math.floor(next() * 4000);
  }
  for (let e = 0; e < events; e++) {
    const venue = Math.floor(next() * venueCount);
    // Evening local time, roughly: 18:00-23:00 at the venue's longitude.
    const offsetHours = Math.round((columns.venueLongitudes[venue] ?? 0) / 15);
    const start =
      FIRST_DAY +
      Math.floor(next() * YEARS * 365) * DAY_MS +
      (18 + Math.floor(next() * 5) - offsetHours) * HOUR_MS;
    columns.eventIds[e] = e + 1;
    columns.eventVenueIds[e] = venue + 1;
    columns.eventStarts[e] = start;
    columns.eventEnds[e] = next() < 0.6 ? Number.NaN : start + (1 + Math.floor(next() * 6)) * HOUR_MS;
    columns.eventLicensed[e] = next() < 0.9 ? 1 : 0;
  }
  return { columns, cities };
}

/**
 * Batches of 200 captures, like the API's: 40% taken at an event (inside its venue's radius and window),
 * 30% elsewhere in a city at a random time, 30% anywhere on Earth. Read from the columns before the build
 * consumes them.
 */
export function generateBatches(catalog: BenchCatalog, batches: number, seed: number): MatchQuery[][] {
  const next = random(seed);
  const { columns, cities } = catalog;
  const venueRow = (id: number) => id - 1;
  const anyTime = () => FIRST_DAY + Math.floor(next() * YEARS * 365 * DAY_MS);
  return Array.from({ length: batches }, () =>
    Array.from({ length: 200 }, () => {
      const kind = next();
      if (kind < 0.4) {
        const e = Math.floor(next() * columns.eventIds.length);
        const v = venueRow(columns.eventVenueIds[e] ?? 1);
        const radius = columns.venueRadii[v] ?? Number.NaN;
        const [latitude, longitude] = around(
          next,
          columns.venueLatitudes[v] ?? 0,
          columns.venueLongitudes[v] ?? 0,
          (Number.isNaN(radius) ? 500 : radius) * 0.4,
        );
        return {
          latitude,
          longitude,
          takenAtMs: (columns.eventStarts[e] ?? 0) + Math.floor(next() * 4 * HOUR_MS),
        };
      }
      if (kind < 0.7) {
        const city = cities[Math.floor(next() * cities.length)] ?? [0, 0];
        const [latitude, longitude] = around(next, city[0], city[1], 10_000);
        return { latitude, longitude, takenAtMs: anyTime() };
      }
      return { latitude: -80 + next() * 160, longitude: -180 + next() * 360, takenAtMs: anyTime() };
    }),
  );
}
