import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EARTH_RADIUS_M } from "../src/shards/geo.ts";
import { createUser, seedCatalog, sendMedia, type VenueFixture } from "./support/catalogFixtures.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * The matching rule of docs/api.md §5 through the API: radius, window, the best-candidate score
 * and its tie-breaks, licensing and venue time zones. These are the rules the sharded engine must keep;
 * every case sits on an edge so an off-by-one fails.
 */

/** A point `meters` due north of a venue: along a meridian haversine distance is exactly R·Δφ. */
const north = (venue: { latitude: number; longitude: number }, meters: number) => ({
  latitude: venue.latitude + (meters / EARTH_RADIUS_M) * (180 / Math.PI),
  longitude: venue.longitude,
});

/** The coordinates of a place, without the venue's other members. */
const point = ({ latitude, longitude }: { latitude: number; longitude: number }) => ({ latitude, longitude });

const V = {
  plain: { id: 1, latitude: 10, longitude: 10 },
  small: { id: 2, latitude: 20, longitude: 20, radiusM: 100 },
  gaps: { id: 3, latitude: 30, longitude: 30 },
  near: { id: 4, latitude: 40, longitude: 40 },
  far: { id: 5, ...north({ latitude: 40, longitude: 40 }, 200) },
  ids: { id: 6, latitude: 50, longitude: 50 },
  early: { id: 7, latitude: 60, longitude: 60 },
  late: { id: 8, ...north({ latitude: 60, longitude: 60 }, 300) },
  licensing: { id: 9, latitude: -10, longitude: -10 },
  newYork: { id: 10, latitude: 40.7, longitude: -74, timezone: "America/New_York" },
  wide: { id: 11, latitude: 70, longitude: 70, radiusM: 1000 },
  tight: { id: 12, ...north({ latitude: 70, longitude: 70 }, 60), radiusM: 100 },
} satisfies Record<string, VenueFixture>;

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  await seedCatalog(server, {
    venues: Object.values(V),
    events: [
      { id: 11, venueId: 1, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 21, venueId: 2, startsAtLocal: "2025-01-10T20:00:00", endsAtLocal: "2025-01-10T22:00:00" },
      { id: 31, venueId: 3, startsAtLocal: "2025-01-10T20:00:00", endsAtLocal: "2025-01-10T22:00:00" },
      { id: 32, venueId: 3, startsAtLocal: "2025-01-10T22:30:00", endsAtLocal: "2025-01-10T23:30:00" },
      { id: 41, venueId: 4, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 51, venueId: 5, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 62, venueId: 6, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 61, venueId: 6, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 71, venueId: 7, startsAtLocal: "2025-01-10T20:00:00", endsAtLocal: "2025-01-10T22:00:00" },
      { id: 81, venueId: 8, startsAtLocal: "2025-01-10T21:00:00" },
      {
        id: 91,
        venueId: 9,
        startsAtLocal: "2025-01-10T20:00:00",
        endsAtLocal: "2025-01-10T21:00:00",
        licensed: false,
      },
      { id: 92, venueId: 9, startsAtLocal: "2025-01-10T22:00:00" },
      { id: 1001, venueId: 10, startsAtLocal: "2025-03-09T02:30:00" },
      { id: 1002, venueId: 10, startsAtLocal: "2025-11-02T01:30:00" },
      { id: 111, venueId: 11, startsAtLocal: "2025-01-10T20:00:00" },
      { id: 121, venueId: 12, startsAtLocal: "2025-01-10T20:00:00" },
    ],
  });
});

afterAll(async () => {
  await server.close();
});

type Match = { media_id: string; matched: boolean; event_id: number | null; venue_id: number | null };
let users = 0;

/** Sends items named by id and returns each one's match entry. */
async function matchAll(
  items: Record<string, { at: string; where: { latitude: number; longitude: number } }>,
) {
  const userId = await createUser(server, key, `matching${++users}@example.com`);
  const media = Object.entries(items).map(([id, { at, where }]) => ({ id, taken_at: at, ...point(where) }));
  const response = await sendMedia(server, key, userId, media);
  expect(response.status).toBe(200);
  expect(response.body.rejected).toEqual([]);
  return Object.fromEntries(response.body.matches.map((m: Match) => [m.media_id, [m.event_id, m.venue_id]]));
}

const NONE = [null, null];

describe("radius", () => {
  test("the default MATCH_RADIUS_M (500 m) by haversine distance, inclusive", async () => {
    const at = "2025-01-10T21:00:00Z";
    expect(
      await matchAll({
        center: { at, where: V.plain },
        inside: { at, where: north(V.plain, 499.9) },
        outside: { at, where: north(V.plain, 500.1) },
      }),
    ).toEqual({ center: [11, 1], inside: [11, 1], outside: NONE });
  });

  test("a venue's own radius_m replaces the default", async () => {
    const at = "2025-01-10T21:00:00Z";
    expect(
      await matchAll({
        inside: { at, where: north(V.small, 99.9) },
        outside: { at, where: north(V.small, 100.1) },
      }),
    ).toEqual({ inside: [21, 2], outside: NONE });
  });
});

describe("time window [start - 120 min, end + 60 min], edges inclusive", () => {
  test("without an end time the event lasts the default 300 minutes", async () => {
    expect(
      await matchAll({
        firstMs: { at: "2025-01-10T18:00:00.000Z", where: V.plain },
        before: { at: "2025-01-10T17:59:59.999Z", where: V.plain },
        lastMs: { at: "2025-01-11T02:00:00.000Z", where: V.plain },
        after: { at: "2025-01-11T02:00:00.001Z", where: V.plain },
        offset: { at: "2025-01-10T15:00:00-03:00", where: V.plain },
      }),
    ).toEqual({ firstMs: [11, 1], before: NONE, lastMs: [11, 1], after: NONE, offset: [11, 1] });
  });

  test("with an end time the window closes 60 minutes after it", async () => {
    expect(
      await matchAll({
        lastMs: { at: "2025-01-10T23:00:00.000Z", where: V.small },
        after: { at: "2025-01-10T23:00:00.001Z", where: V.small },
      }),
    ).toEqual({ lastMs: [21, 2], after: NONE });
  });

  test("a fraction finer than the millisecond still counts: 100 ns past the end is outside", async () => {
    expect(
      await matchAll({
        lastNs: { at: "2025-01-11T02:00:00.000000000Z", where: V.plain },
        afterNs: { at: "2025-01-11T02:00:00.0000001Z", where: V.plain },
        afterUs: { at: "2025-01-10T23:00:00.000001Z", where: V.small },
        beforeNs: { at: "2025-01-10T17:59:59.9999999Z", where: V.plain },
        firstNs: { at: "2025-01-10T18:00:00.000000000Z", where: V.plain },
      }),
    ).toEqual({ lastNs: [11, 1], afterNs: NONE, afterUs: NONE, beforeNs: NONE, firstNs: [11, 1] });
  });
});

describe("best candidate: smallest distance / radius + time distance / padding", () => {
  // Venue 3: event 31 runs 20:00-22:00 (60 min of padding after), event 32 22:30-23:30 (120 min before).
  test("time distance counts against the padding on its side of the event", async () => {
    expect(
      await matchAll({
        // 20 min after 31 (0.333) against 10 min before 32 (0.083).
        nearerSecond: { at: "2025-01-10T22:20:00Z", where: V.gaps },
        // 12 min after 31 (0.2) against 18 min before 32 (0.15): the longer time distance wins.
        sharesFavourSecond: { at: "2025-01-10T22:12:00Z", where: V.gaps },
        insideFirst: { at: "2025-01-10T21:00:00Z", where: V.gaps },
      }),
    ).toEqual({ nearerSecond: [32, 3], sharesFavourSecond: [32, 3], insideFirst: [31, 3] });
  });

  test("at equal scores the smaller time distance wins", async () => {
    // 10 min after 31 is 10/60, 20 min before 32 is 20/120: the same score.
    expect(await matchAll({ item: { at: "2025-01-10T22:10:00Z", where: V.gaps } })).toEqual({
      item: [31, 3],
    });
  });

  test("inside both windows the venue nearer for its radius wins", async () => {
    const at = "2025-01-10T21:00:00Z";
    expect(
      await matchAll({
        nearFirst: { at, where: north(V.near, 50) },
        nearSecond: { at, where: north(V.near, 150) },
        // 50 m from the 1 km venue (0.05) beats 10 m from the 100 m one (0.1).
        relative: { at, where: north(V.wide, 50) },
        insideTight: { at, where: north(V.wide, 58) },
      }),
    ).toEqual({ nearFirst: [41, 4], nearSecond: [51, 5], relative: [111, 11], insideTight: [121, 12] });
  });

  // Venue 7: event 71 runs 20:00-22:00; venue 8, 300 m north, starts event 81 at 21:00.
  test("an arrival photo by its own venue goes to the show about to start there, not the one running next door", async () => {
    expect(
      await matchAll({
        // 15 min before 81 (0.125) at 50 m (0.1), against inside 71 at 250 m (0.5).
        arrival: { at: "2025-01-10T20:45:00Z", where: north(V.early, 250) },
        // The same time 50 m from venue 7: 0.1 against 0.125 + 0.5.
        stayer: { at: "2025-01-10T20:45:00Z", where: north(V.early, 50) },
        // An hour after 71 (1.0 + 0.1) against inside 81 at 250 m (0.5).
        leftOver: { at: "2025-01-10T23:00:00Z", where: north(V.early, 50) },
      }),
    ).toEqual({ arrival: [81, 8], stayer: [71, 7], leftOver: [81, 8] });
  });

  test("at equal time and venue distance the smaller event id wins", async () => {
    expect(await matchAll({ item: { at: "2025-01-10T21:00:00Z", where: V.ids } })).toEqual({ item: [61, 6] });
  });

  test("an unlicensed best candidate gives its venue and no match, even with a licensed runner-up", async () => {
    const userId = await createUser(server, key, "licensing@example.com");
    const response = await sendMedia(server, key, userId, [
      { id: "best-unlicensed", taken_at: "2025-01-10T20:30:00Z", ...point(V.licensing) },
      { id: "licensed", taken_at: "2025-01-10T22:30:00Z", ...point(V.licensing) },
    ]);
    expect(response.body.matched).toBe(1);
    expect(response.body.matches).toEqual([
      { media_id: "best-unlicensed", matched: false, event_id: null, venue_id: 9, confidence: null },
      { media_id: "licensed", matched: true, event_id: 92, venue_id: 9, confidence: 0.67 },
    ]);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual([92]);
    expect(response.body.events[0].media.map((m: { media_id: string }) => m.media_id)).toEqual(["licensed"]);
  });
});

describe("venue time zones", () => {
  test("a start in the spring-forward gap moves forward by the gap (02:30 -> 03:30 EDT = 07:30Z)", async () => {
    expect(
      await matchAll({
        firstMs: { at: "2025-03-09T05:30:00.000Z", where: V.newYork },
        before: { at: "2025-03-09T05:29:59.999Z", where: V.newYork },
      }),
    ).toEqual({ firstMs: [1001, 10], before: NONE });
  });

  test("a start in the fall-back overlap takes the earlier instant (01:30 EDT = 05:30Z)", async () => {
    expect(
      await matchAll({
        firstMs: { at: "2025-11-02T03:30:00.000Z", where: V.newYork },
        before: { at: "2025-11-02T03:29:59.999Z", where: V.newYork },
      }),
    ).toEqual({ firstMs: [1002, 10], before: NONE });
  });

  test("starts_at_local is echoed exactly as the catalog holds it", async () => {
    const userId = await createUser(server, key, "local@example.com");
    const response = await sendMedia(server, key, userId, [
      { id: "a", taken_at: "2025-03-09T08:00:00Z", ...point(V.newYork) },
    ]);
    expect(response.body.events[0].starts_at_local).toBe("2025-03-09T02:30:00");
  });
});

describe("MATCH_* settings", () => {
  let tuned: TestServer;
  let tunedKey: string;

  beforeAll(async () => {
    tuned = await startTestServer({
      MATCH_RADIUS_M: "100",
      MATCH_BEFORE_MINUTES: "30",
      MATCH_AFTER_MINUTES: "10",
      MATCH_DEFAULT_DURATION_MINUTES: "60",
    });
    tunedKey = (await tuned.partner("acme")).sandbox;
    await seedCatalog(tuned, {
      venues: [V.plain],
      events: [{ id: 11, venueId: 1, startsAtLocal: "2025-01-10T20:00:00" }],
    });
  });

  afterAll(async () => {
    await tuned.close();
  });

  test("radius, before, after and default duration come from configuration", async () => {
    const userId = await createUser(tuned, tunedKey, "tuned@example.com");
    const send = (id: string, at: string, where: { latitude: number; longitude: number }) => ({
      id,
      taken_at: at,
      ...point(where),
    });
    const response = await sendMedia(tuned, tunedKey, userId, [
      send("inside", "2025-01-10T20:30:00Z", north(V.plain, 99.9)),
      send("outside", "2025-01-10T20:30:00Z", north(V.plain, 100.1)),
      send("firstMs", "2025-01-10T19:30:00.000Z", V.plain),
      send("before", "2025-01-10T19:29:59.999Z", V.plain),
      send("lastMs", "2025-01-10T21:10:00.000Z", V.plain),
      send("after", "2025-01-10T21:10:00.001Z", V.plain),
    ]);
    expect(Object.fromEntries(response.body.matches.map((m: Match) => [m.media_id, m.event_id]))).toEqual({
      inside: 11,
      outside: null,
      firstMs: 11,
      before: null,
      lastMs: 11,
      after: null,
    });
  });
});
