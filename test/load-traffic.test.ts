import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { DEFAULT_TRAFFIC, generateTraffic, type TrafficPlan } from "../load/traffic/batches.ts";
import type { CatalogSample } from "../load/traffic/sample.ts";
import { parseConfig } from "../src/config.ts";
import { checkMediaBatch, MediaBatchBody } from "../src/http/mediaSchema.ts";
import { ReferenceMatcher } from "../src/shards/reference.ts";
import { Random } from "../src/store/catalog/generate/random.ts";

const settings = parseConfig({}).match;

/** A small catalog: 60 venues around three cities, 3,000 events over six years, a few unlicensed. */
function sampleCatalog(): CatalogSample {
  const random = new Random(11);
  const cities = [
    { latitude: 40.75, longitude: -73.99 },
    { latitude: 51.5, longitude: -0.12 },
    { latitude: 35.68, longitude: 139.69 },
  ];
  const venues = Array.from({ length: 60 }, (_, i) => {
    const city = cities[i % cities.length] ?? { latitude: 0, longitude: 0 };
    return {
      id: i + 1,
      latitude: city.latitude + (random.float() - 0.5) * 0.3,
      longitude: city.longitude + (random.float() - 0.5) * 0.3,
      radiusM: random.chance(0.5) ? null : random.int(150, 800),
    };
  });
  const events = Array.from({ length: 3_000 }, (_, i) => {
    const startsAtMs =
      Date.UTC(2019, 0, 1) + random.int(0, 6 * 365) * 86_400_000 + random.int(17, 21) * 3_600_000;
    const endsAtMs = random.chance(0.5) ? null : startsAtMs + random.int(90, 240) * 60_000;
    return { id: i + 1, venueId: random.int(1, 60), startsAtMs, endsAtMs, licensed: random.chance(0.95) };
  }).sort((a, b) => a.startsAtMs - b.startsAtMs || a.id - b.id);
  return { venues, events };
}

const sample = sampleCatalog();
const options = { ...DEFAULT_TRAFFIC, seed: 5, users: 20, batches: 400 };
const plan: TrafficPlan = generateTraffic(sample, settings, options);
const bodies = plan.batches.map(
  (batch) => JSON.parse(batch.body.toString("utf8")) as { media: MediaItemBody[] },
);

type MediaItemBody = {
  id: string;
  taken_at: string;
  latitude?: number;
  longitude?: number;
  media_type: string;
};

describe("load traffic generator", () => {
  test("is deterministic: the same seed gives byte-identical bodies", () => {
    const again = generateTraffic(sample, settings, options);
    expect(again.batches.length).toBe(plan.batches.length);
    expect(
      again.batches.every((batch, i) => batch.body.equals(plan.batches[i]?.body ?? Buffer.alloc(0))),
    ).toBe(true);
    const other = generateTraffic(sample, settings, { ...options, seed: 6 });
    expect(other.batches[0]?.body.equals(plan.batches[0]?.body ?? Buffer.alloc(0))).toBe(false);
  });

  test("every body passes the API's own batch schema and item checks", () => {
    expect(plan.batches.length).toBe(options.batches);
    for (const body of bodies) {
      expect(Value.Check(MediaBatchBody, body)).toBe(true);
      expect(() => checkMediaBatch(structuredClone(body), true)).not.toThrow();
    }
  });

  test("batches hold 50 to 200 items with ids unique in each batch", () => {
    for (const [i, body] of bodies.entries()) {
      expect(body.media.length).toBe(plan.batches[i]?.items ?? -1);
      expect(body.media.length).toBeGreaterThanOrEqual(50);
      expect(body.media.length).toBeLessThanOrEqual(200);
      expect(new Set(body.media.map((item) => item.id)).size).toBe(body.media.length);
      for (const item of body.media) expect(Number.isNaN(Date.parse(item.taken_at))).toBe(false);
    }
  });

  test("users take turns, some batches are re-sent, and rolls carry videos and items without location", () => {
    expect(new Set(plan.users.map((user) => user.email)).size).toBe(options.users);
    expect(new Set(plan.batches.slice(0, options.users).map((batch) => batch.user)).size).toBe(options.users);
    const distinct = new Set(plan.batches.map((batch) => batch.body));
    expect(distinct.size).toBeLessThan(plan.batches.length);
    const items = bodies.flatMap((body) => body.media);
    expect(items.some((item) => item.media_type === "video")).toBe(true);
    expect(items.some((item) => item.latitude === undefined)).toBe(true);
  });

  test("a few percent of the items match a licensed catalog event", async () => {
    const matcher = new ReferenceMatcher(sample.venues, sample.events, settings);
    const located = bodies
      .flatMap((body) => body.media)
      .filter((item) => item.latitude !== undefined && item.longitude !== undefined);
    const candidates = await matcher.match(
      located.map((item) => ({
        latitude: item.latitude ?? 0,
        longitude: item.longitude ?? 0,
        takenAtMs: Date.parse(item.taken_at),
      })),
    );
    const matched = candidates.filter((candidate) => candidate?.licensed === true).length;
    const share = matched / located.length;
    expect(share).toBeGreaterThan(0.01);
    expect(share).toBeLessThan(0.12);
  });
});
