import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { CURSOR_TTL_MS, decodeCursor, encodeCursor } from "../src/http/cursor.ts";
import { createUser, type EventFixture, seedCatalog, sendMedia } from "./support/catalogFixtures.ts";
import { relicense } from "./support/catalogImport.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let otherKey: string;

const PAGING_VENUE = { id: 1, latitude: 10, longitude: 10 };
const TWIN_VENUE = { id: 2, latitude: -10, longitude: -10 };
const SPARE_VENUE = { id: 3, latitude: 20, longitude: 20 };
const DAY_MS = 86_400_000;
const FIRST_START = Date.UTC(2024, 0, 1, 20);

/**
 * Sixty events two days apart at one venue, with ids deliberately out of time order, plus a twin at
 * another venue starting at the same instant as the newest one (the id decides between them).
 */
const paging: (EventFixture & { startMs: number })[] = Array.from({ length: 60 }, (_, i) => {
  const startMs = FIRST_START + i * 2 * DAY_MS;
  return {
    id: 1000 + ((i * 37) % 60),
    venueId: PAGING_VENUE.id,
    startsAtLocal: new Date(startMs).toISOString().slice(0, 19),
    startMs,
    performers: [{ id: 1, isHeadliner: true }],
  };
});
const newest = paging.at(-1) as (typeof paging)[number];
const twin = {
  id: 5000,
  venueId: TWIN_VENUE.id,
  startsAtLocal: newest.startsAtLocal,
  startMs: newest.startMs,
};
const spare = [1, 2, 3, 4, 5, 6].map((n) => ({
  id: 6000 + n,
  venueId: SPARE_VENUE.id,
  startsAtLocal: `2023-0${n}-01T20:00:00`,
  startMs: Date.UTC(2023, n - 1, 1, 20),
}));

/** The order the history must follow: start instant, then event id, both descending. */
const expectedOrder = [...paging, twin].sort((a, b) => b.startMs - a.startMs || b.id - a.id).map((e) => e.id);

const during = (event: { startMs: number }, minutes = 60) =>
  new Date(event.startMs + minutes * 60_000).toISOString();

let pagingUser: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  otherKey = (await server.partner("globex")).sandbox;
  await seedCatalog(server, {
    venues: [PAGING_VENUE, TWIN_VENUE, SPARE_VENUE],
    performers: [{ id: 1, name: "House Band" }],
    events: [...paging, twin, ...spare],
  });
  pagingUser = await createUser(server, key, "pager@example.com");
  // Two items per event, sent newest capture first, so the media order is the server's doing.
  const media = paging.flatMap((e) => [
    { id: `${e.id}-b`, taken_at: during(e, 90), ...coordinates(PAGING_VENUE) },
    { id: `${e.id}-a`, taken_at: during(e, 30), ...coordinates(PAGING_VENUE) },
  ]);
  media.push({ id: "twin", taken_at: during(twin), ...coordinates(TWIN_VENUE) });
  for (let i = 0; i < media.length; i += 200) {
    const response = await sendMedia(server, key, pagingUser, media.slice(i, i + 200));
    expect(response.status).toBe(200);
  }
});

afterAll(async () => {
  await server.close();
});

function coordinates(venue: { latitude: number; longitude: number }) {
  return { latitude: venue.latitude, longitude: venue.longitude };
}

const history = (userId: string, query = "", apiKey = key) =>
  server.call("GET", `/v1/users/${userId}/events${query}`, { key: apiKey });

type Page = { events: { id: number; media?: unknown[]; media_count: number }[]; next_cursor: string | null };

/** Follows next_cursor to the end and returns every page. */
async function allPages(userId: string, params: string): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?${params}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const response = await history(userId, query);
    expect(response.status).toBe(200);
    pages.push(response.body);
    cursor = response.body.next_cursor;
    expect(response.body.has_more).toBe(cursor !== null);
    expect(response.body.total).toBe(pages.length === 1 ? expectedOrder.length : null);
  } while (cursor !== null);
  return pages;
}

describe("GET /v1/users/{user_id}/events", () => {
  test("the first page uses the default limit of 25 and carries total", async () => {
    const response = await history(pagingUser);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["events", "has_more", "next_cursor", "total"]);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual(expectedOrder.slice(0, 25));
    expect(response.body.total).toBe(61);
    expect(response.body.has_more).toBe(true);
    expect(typeof response.body.next_cursor).toBe("string");
  });

  test("paging with media visits every event once, newest first, with complete media", async () => {
    const pages = await allPages(pagingUser, "limit=7");
    expect(pages).toHaveLength(9);
    const events = pages.flatMap((p) => p.events);
    expect(events.map((e) => e.id)).toEqual(expectedOrder);
    const one = events.find((e) => e.id === paging[0]?.id);
    expect(one).toMatchObject({
      name: `Event ${paging[0]?.id}`,
      starts_at_local: "2024-01-01T20:00:00",
      venue: {
        id: 1,
        name: "Venue 1",
        city: "City 1",
        region: "RG",
        country: "US",
        latitude: 10,
        longitude: 10,
      },
      performers: [{ id: 1, name: "House Band", category: "rock", image_url: null, is_headliner: true }],
      media_count: 2,
      media: [
        { media_id: `${paging[0]?.id}-a`, taken_at: "2024-01-01T20:30:00.000Z", media_type: "photo" },
        { media_id: `${paging[0]?.id}-b`, taken_at: "2024-01-01T21:30:00.000Z", media_type: "photo" },
      ],
    });
  });

  test("paging without media omits the member and keeps the counts", async () => {
    const pages = await allPages(pagingUser, "limit=10&include_media=false");
    const events = pages.flatMap((p) => p.events);
    expect(events.map((e) => e.id)).toEqual(expectedOrder);
    for (const event of events) {
      expect("media" in event).toBe(false);
      expect(event.media_count).toBe(event.id === twin.id ? 1 : 2);
    }
  });

  test("limit=100 returns everything on one last page", async () => {
    const response = await history(pagingUser, "?limit=100&include_media=true");
    expect(response.body.events).toHaveLength(61);
    expect(response.body).toMatchObject({ has_more: false, next_cursor: null, total: 61 });
  });

  test("malformed query parameters are 400 invalid_request", async () => {
    const bad = ["abc", "0", "101", "1.5", "-1", "1e1", "0x10", "", " 5"].map(
      (v) => `limit=${encodeURIComponent(v)}`,
    );
    bad.push("include_media=yes", "include_media=1", "include_media=TRUE", "include_media=");
    for (const query of bad) {
      const response = await history(pagingUser, `?${query}`);
      expect([query, response.status, response.body.error?.code]).toEqual([query, 400, "invalid_request"]);
    }
  });

  test("an unknown query parameter is ignored (a cache-busting _= say)", async () => {
    const response = await history(pagingUser, "?_=1700000000&limit=2");
    expect([response.status, response.body.events.length]).toEqual([200, 2]);
  });

  test("a user without history gets an empty first page", async () => {
    const userId = await createUser(server, key, "empty@example.com");
    expect((await history(userId)).body).toEqual({
      events: [],
      next_cursor: null,
      has_more: false,
      total: 0,
    });
  });

  test("hidden events and events no longer licensed never appear and are not counted", async () => {
    const userId = await createUser(server, key, "filtered@example.com");
    const [a, b, c] = spare;
    if (!a || !b || !c) throw new Error("fixture");
    await sendMedia(
      server,
      key,
      userId,
      [a, b, c].map((e) => ({ id: `m${e.id}`, taken_at: during(e), ...coordinates(SPARE_VENUE) })),
    );
    await server.store.rows(
      sql`update user_events set hidden = true where user_id = ${userId} and event_id = ${b.id}`,
    );
    await relicense(server.store, c.id, false);
    const response = await history(userId);
    await relicense(server.store, c.id, true);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual([a.id]);
    expect(response.body.total).toBe(1);
  });

  test("an event with hundreds of items carries all of them, oldest first", async () => {
    const userId = await createUser(server, key, "heavy@example.com");
    const event = spare[3];
    if (!event) throw new Error("fixture");
    const items = Array.from({ length: 250 }, (_, i) => ({
      id: `item-${String(i).padStart(3, "0")}`,
      taken_at: during(event, 250 - i),
      ...coordinates(SPARE_VENUE),
    }));
    await sendMedia(server, key, userId, items.slice(0, 200));
    await sendMedia(server, key, userId, items.slice(200));
    const [only] = (await history(userId)).body.events;
    expect(only.media_count).toBe(250);
    expect(only.media.map((m: { media_id: string }) => m.media_id)).toEqual(items.map((i) => i.id).reverse());
  });

  test("events matched while a client pages are never seen twice", async () => {
    const userId = await createUser(server, key, "moving@example.com");
    const [e1, e2, e3, e4, e5, e6] = spare;
    if (!e1 || !e2 || !e3 || !e4 || !e5 || !e6) throw new Error("fixture");
    const send = (events: (typeof spare)[number][], suffix = "") =>
      sendMedia(
        server,
        key,
        userId,
        events.map((e) => ({ id: `m${e.id}${suffix}`, taken_at: during(e), ...coordinates(SPARE_VENUE) })),
      );
    await send([e2, e3, e4]);
    const first = await history(userId, "?limit=2");
    expect(first.body.events.map((e: { id: number }) => e.id)).toEqual([e4.id, e3.id]);
    await send([e6, e1, e3], "-again");
    const rest = await history(userId, `?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(rest.body.events.map((e: { id: number }) => e.id)).toEqual([e2.id, e1.id]);
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null, total: null });
  });

  test("an unknown user, or another partner's user, is 404 user_not_found", async () => {
    expect((await history(crypto.randomUUID())).body.error.code).toBe("user_not_found");
    const foreign = await history(pagingUser, "", otherKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("user_not_found");
  });
});

describe("cursors", () => {
  const position = { startsAtMs: Date.UTC(2024, 5, 1), eventId: 42 };
  const secret = "unit-test-secret-of-at-least-32-characters";
  const userId = "0b6e4d9c-6f7e-4a56-9a38-3e2f2c1d0a11";

  test("a cursor is good for 24 hours and not a millisecond more", () => {
    const issuedAt = Date.UTC(2025, 0, 1);
    const cursor = encodeCursor(secret, userId, position, () => issuedAt);
    expect(decodeCursor(secret, userId, cursor, () => issuedAt + CURSOR_TTL_MS)).toEqual(position);
    expect(() => decodeCursor(secret, userId, cursor, () => issuedAt + CURSOR_TTL_MS + 1)).toThrow();
  });

  const invalidCursor = async (cursor: string, forUser = pagingUser) => {
    const response = await history(forUser, `?cursor=${encodeURIComponent(cursor)}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_cursor");
  };

  test("a tampered cursor is 400 invalid_cursor, wherever the change is", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const [payload = "", signature = ""] = cursor.split(".");
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    await invalidCursor(`${flip(payload, 2)}.${signature}`);
    await invalidCursor(`${payload}.${flip(signature, signature.length - 1)}`);
    await invalidCursor(`${payload}.${signature}x`);
    await invalidCursor(`${payload}.${signature}.${signature}`);
    await invalidCursor("not-a-cursor");
    await invalidCursor(payload);
  });

  test("the cursor is judged before the user (contract §2: the user is the last check)", async () => {
    await invalidCursor("not-a-cursor", crypto.randomUUID());
  });

  test("a cursor follows the user whatever the case of the user_id in the path", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const response = await history(pagingUser.toUpperCase(), `?limit=3&cursor=${encodeURIComponent(cursor)}`);
    expect(response.status).toBe(200);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual(expectedOrder.slice(3, 6));
  });

  test("another user's cursor is 400 invalid_cursor", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const otherUser = await createUser(server, key, "thief@example.com");
    await invalidCursor(cursor, otherUser);
  });

  test("an expired cursor is 400 invalid_cursor", async () => {
    const issuedAt = Date.now() - CURSOR_TTL_MS - 1000;
    const expired = encodeCursor(server.cursorSecret, pagingUser, position, () => issuedAt);
    await invalidCursor(expired);
    const fresh = encodeCursor(server.cursorSecret, pagingUser, position);
    expect((await history(pagingUser, `?cursor=${encodeURIComponent(fresh)}`)).status).toBe(200);
  });

  test("an empty cursor reads as none: the first page", async () => {
    const response = await history(pagingUser, "?cursor=&limit=1");
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual(expectedOrder.slice(0, 1));
    expect(response.body.total).toBe(61);
  });
});
