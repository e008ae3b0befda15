import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createMatchingEngine, type MatchingEngine, matcherFromArrays } from "../src/shards/engine.ts";
import { haversineMeters } from "../src/shards/geo.ts";
import type { Candidate, MatchQuery, MatchSettings } from "../src/shards/matcher.ts";
import { ReferenceMatcher } from "../src/shards/reference.ts";
import { arrayCatalogSource } from "../src/shards/source.ts";
import {
  type Catalog,
  catalogArbitrary,
  crowdedCatalogArbitrary,
  crowdedQueryArbitrary,
  queryArbitrary,
  settingsArbitrary,
} from "./shards-arbitraries.ts";

/** Points where grids and cells wrap: both poles, both sides of the antimeridian. */
const EDGE_POINTS: [number, number][] = [
  [90, 0],
  [-90, 180],
  [89.97, 45],
  [0.01, 180],
  [0.01, -180],
  [-16.5, 179.99999999],
];

function edgeQueries(takenAtMs: number): MatchQuery[] {
  return EDGE_POINTS.map(([latitude, longitude]) => ({ latitude, longitude, takenAtMs }));
}

describe("sharded index against the reference matcher (WORKERS=0, built per catalog)", () => {
  test("identical best candidates for random catalogs, radii, captures, shards", async () => {
    const scenario = fc
      .record({
        catalog: catalogArbitrary(25, 80),
        settings: settingsArbitrary,
        shards: fc.integer({ min: 1, max: 64 }),
      })
      .chain(({ catalog, settings, shards }) =>
        fc.record({
          catalog: fc.constant(catalog),
          settings: fc.constant(settings),
          shards: fc.constant(shards),
          queries: fc.array(queryArbitrary(catalog), { minLength: 20, maxLength: 60 }),
        }),
      );
    let matched = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ catalog, settings, shards, queries }) => {
        const all = [...queries, ...edgeQueries(queries[0]?.takenAtMs ?? 0)];
        const engine = matcherFromArrays(catalog.venues, catalog.events, { settings, shards });
        const reference = new ReferenceMatcher(catalog.venues, catalog.events, settings);
        const expected = await reference.match(all);
        matched += expected.filter((candidate) => candidate !== null).length;
        expect(await engine.match(all)).toEqual(expected);
      }),
      { numRuns: 120 },
    );
    // The property is only worth something if a good share of captures do find an event.
    expect(matched).toBeGreaterThan(150);
  }, 60_000);
});

/** The candidate without its place, which candidatesOf does not work out. */
const bare = (c: Candidate | null): Candidate | null =>
  c === null ? null : { eventId: c.eventId, venueId: c.venueId, licensed: c.licensed };

type Scored = { candidate: Candidate; score: number; gap: number; distance: number };

/**
 * Every candidate of a capture with its score, by a different route than the reference matcher: all
 * candidates listed, then sorted by the documented key (docs/api.md §5).
 */
function candidatesOf(catalog: Catalog, settings: MatchSettings, query: MatchQuery): Scored[] {
  const minute = 60_000;
  const list: Scored[] = [];
  for (const event of catalog.events) {
    const venue = catalog.venues.find((v) => v.id === event.venueId);
    if (venue === undefined) continue;
    const radius = venue.radiusM ?? settings.radiusM;
    const distance = haversineMeters(query.latitude, query.longitude, venue.latitude, venue.longitude);
    const start = event.startsAtMs;
    const end = event.endsAtMs ?? start + settings.defaultDurationMinutes * minute;
    const before = start - query.takenAtMs;
    const after = query.takenAtMs - end;
    if (
      distance > radius ||
      before > settings.beforeMinutes * minute ||
      after > settings.afterMinutes * minute
    )
      continue;
    const gap = Math.max(0, before, after);
    const share =
      before > 0
        ? before / (settings.beforeMinutes * minute)
        : after > 0
          ? after / (settings.afterMinutes * minute)
          : 0;
    list.push({
      candidate: { eventId: event.id, venueId: venue.id, licensed: event.licensed },
      score: distance / radius + share,
      gap,
      distance,
    });
  }
  return list.sort(
    (a, b) =>
      a.score - b.score ||
      a.gap - b.gap ||
      a.distance - b.distance ||
      a.candidate.eventId - b.candidate.eventId,
  );
}

describe("the best candidate is the smallest score, then time distance, venue distance, event id", () => {
  test("engine answers are the head of every candidate sorted by that key", async () => {
    const scenario = fc
      .record({ catalog: crowdedCatalogArbitrary, settings: settingsArbitrary })
      .chain(({ catalog, settings }) =>
        fc.record({
          catalog: fc.constant(catalog),
          settings: fc.constant(settings),
          queries: fc.array(crowdedQueryArbitrary(catalog), { minLength: 20, maxLength: 60 }),
        }),
      );
    let contested = 0;
    let timeFirstDiffers = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ catalog, settings, queries }) => {
        const engine = matcherFromArrays(catalog.venues, catalog.events, { settings, shards: 4 });
        const answers = await engine.match(queries);
        queries.forEach((query, i) => {
          const sorted = candidatesOf(catalog, settings, query);
          expect(bare(answers[i] ?? null)).toEqual(sorted[0]?.candidate ?? null);
          if (sorted.length < 2) return;
          contested++;
          const byTime = [...sorted].sort(
            (a, b) => a.gap - b.gap || a.distance - b.distance || a.candidate.eventId - b.candidate.eventId,
          );
          if (byTime[0]?.candidate.eventId !== sorted[0]?.candidate.eventId) timeFirstDiffers++;
        });
      }),
      { numRuns: 150 },
    );
    // Worth something only if many captures have rivals and the score often overrules time distance.
    expect(contested).toBeGreaterThan(300);
    expect(timeFirstDiffers).toBeGreaterThan(30);
  }, 60_000);
});

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};

describe.each([
  { workers: 0, shards: 1 },
  { workers: 0, shards: 64 },
  { workers: 2, shards: 1 },
  { workers: 2, shards: 64 },
])("engine with WORKERS=$workers SHARDS=$shards against the reference matcher", ({ workers, shards }) => {
  let catalog: Catalog;
  let engine: MatchingEngine;
  let reference: ReferenceMatcher;

  beforeAll(async () => {
    [catalog] = fc.sample(catalogArbitrary(400, 3000), { numRuns: 1, seed: 20_240_331 }) as [Catalog];
    engine = await createMatchingEngine(arrayCatalogSource(catalog.venues, catalog.events), {
      settings: SETTINGS,
      shards,
      workers,
      // Small tasks on purpose: batches spread over several tasks and workers, as under load.
      pool: { minTaskItems: 16, maxTaskItems: 64 },
    });
    reference = new ReferenceMatcher(catalog.venues, catalog.events, SETTINGS);
  });
  afterAll(async () => {
    await engine.close();
  });

  test("identical answers for concurrent random batches", async () => {
    const batches = fc.sample(fc.array(queryArbitrary(catalog), { minLength: 100, maxLength: 200 }), {
      numRuns: 40,
      seed: 7,
    });
    const expected = await Promise.all(batches.map((batch) => reference.match(batch)));
    const actual = await Promise.all(batches.map((batch) => engine.match(batch)));
    expect(actual).toEqual(expected);
    expect(expected.flat().filter((candidate) => candidate !== null).length).toBeGreaterThan(200);
  });

  test("empty batches and captures far from every venue", async () => {
    expect(await engine.match([])).toEqual([]);
    const far = [{ latitude: -45, longitude: 100, takenAtMs: Date.UTC(2024, 3, 1) }];
    expect(await engine.match([...far, ...edgeQueries(Date.UTC(2024, 3, 1))])).toEqual(
      await reference.match([...far, ...edgeQueries(Date.UTC(2024, 3, 1))]),
    );
  });
});
