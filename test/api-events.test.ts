/** GET /v1/users/{user_id}/events: order, paging, media, visibility (cursors: api-events-cursors). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createUser, sendMedia } from "./support/catalogFixtures.ts";
import { relicense } from "./support/catalogImport.ts";
import {
  coordinates,
  during,
  expectedOrder,
  paging,
  SPARE_VENUE,
  spare,
  startPagingServer,
  twin,
} from "./support/pagingHistory.ts";
import type { TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let otherKey: string;
let pagingUser: string;

beforeAll(async () => {
  ({ server, key, otherKey, pagingUser } = await startPagingServer());
});

afterAll(async () => {
  await server.close();
});

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

  test("malformed query parameters are 400 invalid_request, an integer out of bounds with reason range", async () => {
    const limits: [string, string][] = [
      ["0", "range"],
      ["101", "range"],
      ["-1", "range"],
      ["abc", "type"],
      ["1.5", "type"],
      ["1e1", "type"],
      ["0x10", "type"],
      ["", "type"],
      [" 5", "type"],
      ["007", "type"],
    ];
    const bad: [string, string, string][] = limits.map(([v, reason]) => [
      `limit=${encodeURIComponent(v)}`,
      "limit",
      reason,
    ]);
    for (const v of ["yes", "1", "TRUE", ""]) bad.push([`include_media=${v}`, "include_media", "enum"]);
    for (const [query, field, reason] of bad) {
      const response = await history(pagingUser, `?${query}`);
      expect([query, response.status, response.body.error?.code, response.body.error?.details]).toEqual([
        query,
        400,
        "invalid_request",
        { fields: [{ field, reason }] },
      ]);
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
