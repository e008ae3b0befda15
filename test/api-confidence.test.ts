/**
 * Match confidence through the API (docs/api.md §15): on each match and each event of a batch answer,
 * on history events, the min_confidence filter with its total and paging, its 400s, and a routine spot
 * lowering a neighbour's events while a season-ticket holder in the stands keeps hers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  itemConfidence,
  itemPlace,
  SUGGESTED_MIN_CONFIDENCE,
  spotCell,
} from "../src/confidence/confidence.ts";
import { createUser, localInstant, seedCatalog, sendMedia } from "./support/catalogFixtures.ts";
import { type EventItem, eventConfidence } from "./support/confidenceModel.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const SETTINGS = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };
const VENUE = { id: 1, latitude: 51.5, longitude: -0.12, radiusM: 500, timezone: "UTC" };
/** Ten nights at the venue, 19:00 to 22:00 UTC. */
const NIGHTS = Array.from({ length: 10 }, (_, n) => ({
  id: 100 + n,
  venueId: 1,
  startsAtLocal: `2025-06-${String(n + 1).padStart(2, "0")}T19:00:00`,
  endsAtLocal: `2025-06-${String(n + 1).padStart(2, "0")}T22:00:00`,
}));
const startMs = (n: number) => localInstant(NIGHTS[n]?.startsAtLocal ?? "", "UTC").getTime();
const at = (n: number, minutes: number) => new Date(startMs(n) + minutes * 60_000).toISOString();

const CENTRE = { latitude: VENUE.latitude, longitude: VENUE.longitude };
/** About 300 m north of the centre: inside the radius, well outside the core (100 m). */
const BALCONY = { latitude: VENUE.latitude + 0.0027, longitude: VENUE.longitude };
/** About 450 m out: near the edge. */
const EDGE = { latitude: VENUE.latitude, longitude: VENUE.longitude + 0.0065 };

let server: TestServer;
let key: string;
let users = 0;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  await seedCatalog(server, { venues: [VENUE], events: NIGHTS });
});

afterAll(async () => {
  await server.close();
});

const newUser = () => createUser(server, key, `confidence${++users}@example.com`);
const photo = (id: string, takenAt: string, where = CENTRE) => ({ id, taken_at: takenAt, ...where });
const history = (userId: string, query = "") =>
  server.call("GET", `/v1/users/${userId}/events${query}`, { key });
type HistoryEvent = { id: number; confidence: number | null };
const confidences = async (userId: string, query = "?limit=100") =>
  Object.fromEntries(
    ((await history(userId, query)).body.events as HistoryEvent[]).map((e) => [e.id, e.confidence]),
  );

/** What the model gives for non-routine items at night `n`. */
function expectedAt(n: number, items: { takenAt: string; where: typeof CENTRE }[]): number {
  const event = { startsAtMs: startMs(n), endsAtMs: startMs(n) + 3 * 3_600_000 };
  const placed: EventItem[] = items.map(({ takenAt, where }) => {
    const takenAtMs = Date.parse(takenAt);
    const { inCore } = spotCell(where, VENUE);
    return {
      ...itemPlace({ ...where, takenAtMs }, VENUE, event, SETTINGS),
      takenAtMs,
      inCore,
      routine: false,
    };
  });
  return eventConfidence(placed, event.startsAtMs, event.endsAtMs);
}

describe("confidence in the batch answer and the history", () => {
  test("each match carries its own, each event the user's attendance from all items there", async () => {
    const userId = await newUser();
    const first = await sendMedia(server, key, userId, [
      photo("door", at(0, -90), EDGE),
      photo("nowhere", at(0, 30), { latitude: 0, longitude: 0 }),
    ]);
    expect(first.status).toBe(200);
    const door = itemPlace(
      { ...EDGE, takenAtMs: startMs(0) - 90 * 60_000 },
      VENUE,
      {
        startsAtMs: startMs(0),
        endsAtMs: startMs(0) + 3 * 3_600_000,
      },
      SETTINGS,
    );
    expect(first.body.matches).toEqual([
      {
        media_id: "door",
        matched: true,
        event_id: 100,
        venue_id: 1,
        confidence: itemConfidence(door, false),
      },
      { media_id: "nowhere", matched: false, event_id: null, venue_id: null, confidence: null },
    ]);
    const low = expectedAt(0, [{ takenAt: at(0, -90), where: EDGE }]);
    expect(low).toBeLessThan(SUGGESTED_MIN_CONFIDENCE);
    expect(first.body.events[0].confidence).toBe(low);

    // More items, closer and spread over the show, raise it; the answer counts earlier batches' items.
    const second = await sendMedia(server, key, userId, [
      photo("opening", at(0, 5)),
      photo("encore", at(0, 170)),
    ]);
    const high = expectedAt(0, [
      { takenAt: at(0, -90), where: EDGE },
      { takenAt: at(0, 5), where: CENTRE },
      { takenAt: at(0, 170), where: CENTRE },
    ]);
    expect(high).toBeGreaterThan(low);
    expect(second.body.events[0].confidence).toBe(high);
    expect(await confidences(userId)).toEqual({ 100: high });

    // Taking the items back lowers it again.
    await sendMedia(server, key, userId, [photo("encore", at(0, 170), { latitude: 0, longitude: 0 })]);
    expect(await confidences(userId)).toEqual({
      100: expectedAt(0, [
        { takenAt: at(0, -90), where: EDGE },
        { takenAt: at(0, 5), where: CENTRE },
      ]),
    });
  });
});

describe("min_confidence", () => {
  /** A user with strong evidence on the even nights and one edge photo in the padding on the odd ones. */
  async function mixedUser(): Promise<string> {
    const userId = await newUser();
    const items = NIGHTS.flatMap((_, n) =>
      n % 2 === 0
        ? [photo(`a${n}`, at(n, 10)), photo(`b${n}`, at(n, 150))]
        : [photo(`edge${n}`, at(n, -100), EDGE)],
    );
    expect((await sendMedia(server, key, userId, items)).status).toBe(200);
    return userId;
  }

  test("leaves out events below it; total and paging follow the filter; 0 leaves nothing out", async () => {
    const userId = await mixedUser();
    const all = await history(userId, "?limit=100");
    expect(all.body.total).toBe(10);
    expect((await history(userId, "?min_confidence=0")).body.total).toBe(10);
    const strong = [108, 106, 104, 102, 100];
    const filtered = `min_confidence=${SUGGESTED_MIN_CONFIDENCE}`;
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=2&${filtered}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await history(userId, query);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(pages === 0 ? strong.length : null);
      for (const event of page.body.events as HistoryEvent[]) {
        expect(event.confidence).toBeGreaterThanOrEqual(SUGGESTED_MIN_CONFIDENCE);
        seen.push(event.id);
      }
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(strong);
    expect(pages).toBe(3);
    // A threshold equal to an event's confidence keeps it; one a hundredth above leaves it out.
    const weakest = Math.min(...Object.values(await confidences(userId)).map(Number));
    expect((await history(userId, `?min_confidence=${weakest}`)).body.total).toBe(10);
    const above = (Math.round(weakest * 100) + 1) / 100;
    expect((await history(userId, `?min_confidence=${above}`)).body.total).toBeLessThan(10);
    expect((await history(userId, "?min_confidence=1")).body.total).toBe(0);
  });

  test("a cursor from one threshold continues under another: a position, not a filter", async () => {
    const userId = await mixedUser();
    const first = await history(userId, "?limit=3");
    expect(first.body.events.map((e: HistoryEvent) => e.id)).toEqual([109, 108, 107]);
    const next = await history(
      userId,
      `?limit=3&min_confidence=0.6&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect(next.body.events.map((e: HistoryEvent) => e.id)).toEqual([106, 104, 102]);
  });

  test("anything but a plain decimal from 0 to 1 is 400 invalid_request", async () => {
    const userId = await newUser();
    const bad: [string, string][] = [
      ["1.5", "range"],
      ["-0.1", "range"],
      ["2", "range"],
      ["abc", "type"],
      ["1e-1", "type"],
      [".5", "type"],
      ["0.5 ", "type"],
      ["", "type"],
      ["NaN", "type"],
    ];
    for (const [value, reason] of bad) {
      const response = await history(userId, `?min_confidence=${encodeURIComponent(value)}`);
      expect([value, response.status, response.body.error?.code, response.body.error?.details]).toEqual([
        value,
        400,
        "invalid_request",
        { fields: [{ field: "min_confidence", reason }] },
      ]);
    }
    for (const value of ["0", "1", "0.6", "1.0", "0.65"]) {
      expect([value, (await history(userId, `?min_confidence=${value}`)).status]).toEqual([value, 200]);
    }
  });
});

describe("routine spots", () => {
  test("photos from one spot outside the core on many event nights lower those events", async () => {
    const neighbour = await newUser();
    const fan = await newUser();
    // Each night one photo from the balcony (the neighbour) or from the stands (the fan), night by night.
    for (let n = 0; n < 5; n++) {
      await sendMedia(server, key, neighbour, [photo(`n${n}`, at(n, 60), BALCONY)]);
      await sendMedia(server, key, fan, [photo(`f${n}`, at(n, 60), CENTRE)]);
      if (n === 2) {
        // Three nights from one spot: not yet routine.
        const early = await confidences(neighbour);
        expect(early[100]).toBe(expectedAt(0, [{ takenAt: at(0, 60), where: BALCONY }]));
      }
    }
    const single = expectedAt(0, [{ takenAt: at(0, 60), where: BALCONY }]);
    const lowered = await confidences(neighbour);
    // The fourth night made the spot routine: night 0's event fell too, though no later batch touched it.
    for (const id of [100, 101, 102, 103, 104]) expect(lowered[id]).toBeLessThan(single);
    expect(lowered[100]).toBeLessThan(0.2);
    const fan5 = await confidences(fan);
    for (const id of [100, 101, 102, 103, 104]) {
      expect(fan5[id]).toBe(expectedAt(id - 100, [{ takenAt: at(id - 100, 60), where: CENTRE }]));
    }

    // Taking back two of the nights makes the spot ordinary again, and night 0 rises with it.
    await sendMedia(server, key, neighbour, [
      photo("n3", at(3, 60), { latitude: 0, longitude: 0 }),
      photo("n4", at(4, 60), { latitude: 0, longitude: 0 }),
    ]);
    expect((await confidences(neighbour))[100]).toBe(single);
  });
});
