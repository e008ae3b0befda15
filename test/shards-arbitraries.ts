import fc from "fast-check";
import { cellToBoundary, latLngToCell } from "h3-js";
import { INDEX_RESOLUTION } from "../src/shards/cells.ts";
import { EARTH_RADIUS_M } from "../src/shards/geo.ts";
import type { IndexEvent, IndexVenue, MatchQuery, MatchSettings } from "../src/shards/matcher.ts";
import { MAX_RADIUS_M } from "../src/store/catalog/records.ts";

/**
 * Random catalogs and captures for comparing the engine with the reference matcher. Venues crowd
 * around a few hot spots (antimeridian, both poles, a city, the null island) so that radii overlap and
 * captures land near venues; some captures sit exactly on H3 cell vertices and edges.
 */

const HOUR_MS = 3_600_000;
const BASE_MS = Date.UTC(2024, 2, 31, 0, 0, 0);
/** UTC offsets of real zones, in minutes: the catalog stores instants resolved from local times. */
const ZONE_OFFSETS = [-720, -600, -300, -210, 0, 60, 330, 345, 525, 840];
const HOT_SPOTS: [number, number][] = [
  [0.01, 179.995],
  [-16.5, -179.99],
  [89.97, 45],
  [-89.96, -120],
  [40.75, -73.99],
  [0, 0],
];

export const settingsArbitrary: fc.Arbitrary<MatchSettings> = fc.record({
  radiusM: fc.integer({ min: 1, max: 5000 }),
  beforeMinutes: fc.integer({ min: 0, max: 240 }),
  afterMinutes: fc.integer({ min: 0, max: 240 }),
  defaultDurationMinutes: fc.integer({ min: 1, max: 600 }),
});

function wrapLongitude(longitude: number): number {
  return longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude;
}

/** A point up to `maxM` metres from a centre (moving along a meridian and a parallel, clamped at poles). */
function offset(latitude: number, longitude: number, northM: number, eastM: number): [number, number] {
  const lat = Math.max(-90, Math.min(90, latitude + (northM / EARTH_RADIUS_M) * (180 / Math.PI)));
  const cos = Math.max(1e-6, Math.cos((lat * Math.PI) / 180));
  return [lat, wrapLongitude(longitude + (eastM / (EARTH_RADIUS_M * cos)) * (180 / Math.PI))];
}

const spot = fc.constantFrom(...HOT_SPOTS);
const metres = (max: number) => fc.double({ min: -max, max, noNaN: true });

const venueArbitrary = fc
  .record({
    spot,
    north: metres(8000),
    east: metres(8000),
    // A venue's own radius, up to the largest a catalog may give (MATCH_RADIUS_M stops at 5 km).
    radius: fc.option(fc.integer({ min: 1, max: MAX_RADIUS_M })),
  })
  .map(({ spot: [lat, lng], north, east, radius }) => {
    const [latitude, longitude] = offset(lat, lng, north, east);
    return { latitude, longitude, radiusM: radius };
  });

const eventArbitrary = fc.record({
  localHours: fc.integer({ min: 0, max: 72 }),
  zone: fc.constantFrom(...ZONE_OFFSETS),
  durationMinutes: fc.option(fc.integer({ min: 0, max: 2000 })),
  licensed: fc.boolean(),
  venue: fc.nat(),
});

export type Catalog = { venues: IndexVenue[]; events: IndexEvent[] };

export const catalogArbitrary = (maxVenues: number, maxEvents: number): fc.Arbitrary<Catalog> =>
  fc
    .record({
      venues: fc.array(venueArbitrary, { minLength: 1, maxLength: maxVenues }),
      events: fc.array(eventArbitrary, { maxLength: maxEvents }),
    })
    .map(({ venues, events }) => ({
      venues: venues.map((venue, i) => ({ id: 1000 + i, ...venue })),
      events: events.map((event, i) => {
        const startsAtMs = BASE_MS + event.localHours * HOUR_MS - event.zone * 60_000;
        return {
          // Ids out of insertion order, so the id tie-break is exercised independently of row order.
          id: ((i * 7919) % 100_003) + 1,
          venueId: 1000 + (event.venue % venues.length),
          startsAtMs,
          endsAtMs: event.durationMinutes === null ? null : startsAtMs + event.durationMinutes * 60_000,
          licensed: event.licensed,
        };
      }),
    }));

/** A capture near a venue, or on a vertex / edge midpoint of an H3 cell near it, at a time near the events. */
export const queryArbitrary = (catalog: Catalog): fc.Arbitrary<MatchQuery> =>
  fc
    .record({
      venue: fc.nat(),
      near: fc.boolean(),
      north: metres(6000),
      east: metres(6000),
      onCell: fc.integer({ min: 0, max: 3 }),
      vertex: fc.nat(),
      hours: fc.double({ min: -12, max: 84, noNaN: true }),
    })
    .map(({ venue, near, north, east, onCell, vertex, hours }) => {
      const v = catalog.venues[venue % catalog.venues.length] ?? { latitude: 0, longitude: 0 };
      // Half the captures within a few hundred metres, where the default radius decides.
      const scale = near ? 0.1 : 1;
      let [latitude, longitude] = offset(v.latitude, v.longitude, north * scale, east * scale);
      if (onCell > 0) {
        const boundary = cellToBoundary(latLngToCell(latitude, longitude, INDEX_RESOLUTION));
        const a = boundary[vertex % boundary.length] ?? [latitude, longitude];
        const b = boundary[(vertex + 1) % boundary.length] ?? a;
        // 1: on a vertex; 2 and 3: on the straight lat/lng midpoint of an edge, next to where H3 splits cells.
        [latitude, longitude] =
          onCell === 1
            ? a
            : [(a[0] + b[0]) / 2, wrapLongitude(Math.abs(a[1] - b[1]) > 180 ? a[1] : (a[1] + b[1]) / 2)];
      }
      return { latitude, longitude, takenAtMs: BASE_MS + Math.round(hours * HOUR_MS) };
    });

/**
 * A few venues within about a kilometre of each other and events packed into one evening, so most
 * captures have several candidates and the best-candidate score, not the radius or the window, decides.
 */
export const crowdedCatalogArbitrary: fc.Arbitrary<Catalog> = fc
  .record({
    spot,
    venues: fc.array(
      fc.record({
        north: metres(700),
        east: metres(700),
        radius: fc.option(fc.integer({ min: 200, max: 2000 })),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    events: fc.array(
      fc.record({
        minutes: fc.integer({ min: 0, max: 720 }),
        durationMinutes: fc.option(fc.integer({ min: 0, max: 300 })),
        licensed: fc.boolean(),
        venue: fc.nat(),
      }),
      { minLength: 1, maxLength: 40 },
    ),
  })
  .map(({ spot: [lat, lng], venues, events }) => ({
    venues: venues.map(({ north, east, radius }, i) => {
      const [latitude, longitude] = offset(lat, lng, north, east);
      return { id: 1000 + i, latitude, longitude, radiusM: radius };
    }),
    events: events.map((event, i) => {
      const startsAtMs = BASE_MS + event.minutes * 60_000;
      return {
        id: ((i * 7919) % 100_003) + 1,
        venueId: 1000 + (event.venue % venues.length),
        startsAtMs,
        endsAtMs: event.durationMinutes === null ? null : startsAtMs + event.durationMinutes * 60_000,
        licensed: event.licensed,
      };
    }),
  }));

/** A capture within about a kilometre of the crowd's first venue, during or around its evening. */
export const crowdedQueryArbitrary = (catalog: Catalog): fc.Arbitrary<MatchQuery> =>
  fc
    .record({ north: metres(1200), east: metres(1200), minutes: fc.integer({ min: -240, max: 1200 }) })
    .map(({ north, east, minutes }) => {
      const v = catalog.venues[0] ?? { latitude: 0, longitude: 0 };
      const [latitude, longitude] = offset(v.latitude, v.longitude, north, east);
      // Whole seconds and odd milliseconds both: exact score ties and near-ties.
      return { latitude, longitude, takenAtMs: BASE_MS + minutes * 60_000 + (minutes % 7 === 0 ? 0 : 1234) };
    });
