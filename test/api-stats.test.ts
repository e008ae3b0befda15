import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventPerformers, events, performers, venues } from "../src/store/schema/index.ts";
import { relicense } from "./support/catalogImport.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { keepMedia } from "./support/userEvents.ts";

let server: TestServer;
let key: string;
let otherKey: string;

const utc = (iso: string) => new Date(`${iso}Z`);

/**
 * A small catalog shaped to exercise every figure: two venues in one city (Austin), a city with no
 * region (Berlin), a venue with no place at all, a performer without a category, an event whose local
 * year differs from its UTC year, two events starting at the same instant, and rows stats must skip.
 */
async function seedCatalog(): Promise<void> {
  const { db } = server.store;
  const place = { latitude: 0, longitude: 0, timezone: "UTC", radiusM: null };
  await db.insert(venues).values([
    { id: 1, name: "Arena", city: "Austin", region: "TX", country: "US", ...place },
    { id: 2, name: "Club", city: "Austin", region: "TX", country: "US", ...place },
    { id: 3, name: "Halle", city: "Berlin", region: null, country: "DE", ...place },
    { id: 4, name: "Field", city: null, region: null, country: null, ...place },
    { id: 5, name: "Bowl", city: "Los Angeles", region: "CA", country: "US", ...place },
  ]);
  await db.insert(performers).values([
    { id: 10, name: "Rock Band", category: "rock", imageUrl: "https://img.example/10.jpg" },
    { id: 11, name: "Jazz Trio", category: "jazz", imageUrl: null },
    { id: 12, name: "Mystery", category: null, imageUrl: null },
    { id: 13, name: "Other Rockers", category: "rock", imageUrl: null },
  ]);
  const event = (id: number, venueId: number, local: string, instant: string, licensed = true) => ({
    id,
    name: `Event ${id}`,
    venueId,
    startsAtLocal: local,
    startsAt: utc(instant),
    licensed,
  });
  await db.insert(events).values([
    event(100, 1, "2023-05-01T20:00:00", "2023-05-02T01:00:00"),
    event(101, 2, "2024-07-04T21:00:00", "2024-07-05T02:00:00"),
    event(102, 3, "2024-12-31T23:30:00", "2024-12-31T22:30:00"),
    // Local year 2024, UTC year 2025: events_by_year counts it in 2024.
    event(103, 5, "2024-12-31T20:00:00", "2025-01-01T04:00:00"),
    // 104 and 105 start at the same instant: first/latest break the tie by id.
    event(104, 4, "2025-03-01T12:00:00", "2025-03-01T12:00:00"),
    event(105, 1, "2025-03-01T12:00:00", "2025-03-01T12:00:00"),
    event(106, 1, "2025-06-01T20:00:00", "2025-06-02T01:00:00", false),
    event(107, 1, "2026-01-01T20:00:00", "2026-01-02T01:00:00"),
    event(108, 1, "2026-02-01T20:00:00", "2026-02-02T01:00:00"),
  ]);
  const billed = (eventId: number, performerId: number, position: number) => ({
    eventId,
    performerId,
    position,
    isHeadliner: position === 0,
  });
  await db
    .insert(eventPerformers)
    .values([
      billed(100, 10, 0),
      billed(100, 13, 1),
      billed(101, 10, 0),
      billed(102, 11, 0),
      billed(103, 12, 0),
      billed(105, 11, 0),
      billed(106, 10, 0),
      billed(107, 10, 0),
      billed(108, 10, 0),
    ]);
}

async function createUser(apiKey: string, email: string): Promise<string> {
  const response = await server.call("POST", "/v1/users", { key: apiKey, body: { email } });
  expect(response.status).toBe(201);
  return response.body.user_id;
}

const statsOf = (userId: string, query = "", apiKey = key) =>
  server.call("GET", `/v1/users/${userId}/stats${query}`, { key: apiKey });

let fan: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  otherKey = (await server.partner("globex")).sandbox;
  await seedCatalog();
  fan = await createUser(key, "fan@example.com");
  await keepMedia(server.store, fan, [
    { eventId: 100, startsAt: utc("2023-05-02T01:00:00"), photos: 3, videos: 1 },
    { eventId: 101, startsAt: utc("2024-07-05T02:00:00"), photos: 2 },
    { eventId: 102, startsAt: utc("2024-12-31T22:30:00"), photos: 1, videos: 2 },
    { eventId: 103, startsAt: utc("2025-01-01T04:00:00"), photos: 1 },
    { eventId: 104, startsAt: utc("2025-03-01T12:00:00"), photos: 1 },
    { eventId: 105, startsAt: utc("2025-03-01T12:00:00"), photos: 4 },
    // Invisible: unlicensed, hidden, and a row whose media were all re-evaluated away.
    { eventId: 106, startsAt: utc("2025-06-02T01:00:00"), photos: 9 },
    { eventId: 107, startsAt: utc("2026-01-02T01:00:00"), photos: 9, hidden: true },
    { eventId: 108, startsAt: utc("2026-02-02T01:00:00"), photos: 0 },
  ]);
});

afterAll(async () => {
  await server.close();
});

describe("GET /v1/users/{user_id}/stats", () => {
  test("a new user has empty stats, has_synced false and last_sync_at null", async () => {
    const userId = await createUser(key, "new@example.com");
    const response = await statsOf(userId);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      has_synced: false,
      last_sync_at: null,
      events_count: 0,
      media_count: 0,
      photo_count: 0,
      video_count: 0,
      venues_count: 0,
      cities_count: 0,
      countries_count: 0,
      performers_count: 0,
      first_event: null,
      latest_event: null,
      top_performers: [],
      top_venues: [],
      top_cities: [],
      events_by_year: [],
      categories: [],
    });
  });

  test("an unknown query parameter is ignored (a cache-busting _= say)", async () => {
    const userId = await createUser(key, "cachebust@example.com");
    expect((await statsOf(userId, "?_=1700000000")).status).toBe(200);
  });

  test("counts only visible events: licensed, not hidden, with kept media", async () => {
    const { status, body } = await statsOf(fan);
    expect(status).toBe(200);
    expect(body.events_count).toBe(6);
    expect(body.media_count).toBe(15);
    expect(body.photo_count).toBe(12);
    expect(body.video_count).toBe(3);
    expect(body.venues_count).toBe(5);
    // Austin TX US, Berlin DE, Los Angeles CA US; the venue without a city is no city.
    expect(body.cities_count).toBe(3);
    expect(body.countries_count).toBe(2);
    expect(body.performers_count).toBe(4);
  });

  test("first and latest event go by start instant, ties by id", async () => {
    const { body } = await statsOf(fan);
    expect(body.first_event).toEqual({ id: 100, name: "Event 100", starts_at_local: "2023-05-01T20:00:00" });
    expect(body.latest_event).toEqual({ id: 105, name: "Event 105", starts_at_local: "2025-03-01T12:00:00" });
  });

  test("top lists count distinct events, most first, ties by id or name", async () => {
    const { body } = await statsOf(fan);
    expect(body.top_performers).toEqual([
      {
        id: 10,
        name: "Rock Band",
        category: "rock",
        image_url: "https://img.example/10.jpg",
        events_count: 2,
      },
      { id: 11, name: "Jazz Trio", category: "jazz", image_url: null, events_count: 2 },
      { id: 12, name: "Mystery", category: null, image_url: null, events_count: 1 },
      { id: 13, name: "Other Rockers", category: "rock", image_url: null, events_count: 1 },
    ]);
    expect(body.top_venues).toEqual([
      { id: 1, name: "Arena", city: "Austin", region: "TX", country: "US", events_count: 2 },
      { id: 2, name: "Club", city: "Austin", region: "TX", country: "US", events_count: 1 },
      { id: 3, name: "Halle", city: "Berlin", region: null, country: "DE", events_count: 1 },
      { id: 4, name: "Field", city: null, region: null, country: null, events_count: 1 },
      { id: 5, name: "Bowl", city: "Los Angeles", region: "CA", country: "US", events_count: 1 },
    ]);
    expect(body.top_cities).toEqual([
      { city: "Austin", region: "TX", country: "US", events_count: 3 },
      { city: "Berlin", region: null, country: "DE", events_count: 1 },
      { city: "Los Angeles", region: "CA", country: "US", events_count: 1 },
    ]);
  });

  test("events_by_year uses the local start year, ascending", async () => {
    const { body } = await statsOf(fan);
    expect(body.events_by_year).toEqual([
      { year: 2023, events_count: 1 },
      { year: 2024, events_count: 3 },
      { year: 2025, events_count: 2 },
    ]);
  });

  test("categories count each event once, however many of its performers share the category", async () => {
    const { body } = await statsOf(fan);
    expect(body.categories).toEqual([
      { category: "jazz", events_count: 2 },
      { category: "rock", events_count: 2 },
    ]);
  });

  test("top bounds every top list", async () => {
    const { status, body } = await statsOf(fan, "?top=1");
    expect(status).toBe(200);
    expect(body.top_performers.map((p: { id: number }) => p.id)).toEqual([10]);
    expect(body.top_venues.map((v: { id: number }) => v.id)).toEqual([1]);
    expect(body.top_cities.map((c: { city: string }) => c.city)).toEqual(["Austin"]);
    expect(body.events_count).toBe(6);
    expect((await statsOf(fan, "?top=50")).body.top_venues).toHaveLength(5);
  });

  test("top outside 1..50 (reason range) or not a plain integer (type) is invalid_request", async () => {
    const outOfBounds = ["0", "51", "-1", "99999999999999999999"];
    for (const top of [...outOfBounds, "1.5", "abc", "1e1", "0x10", "", "%205", "05"]) {
      const response = await statsOf(fan, `?top=${top}`);
      const reason = outOfBounds.includes(top) ? "range" : "type";
      expect([top, response.status, response.body.error.code, response.body.error.details]).toEqual([
        top,
        400,
        "invalid_request",
        { fields: [{ field: "top", reason }] },
      ]);
    }
  });

  test("reports the sync state of the user row", async () => {
    const sync = await server.call("POST", `/v1/users/${fan}/sync-complete`, {
      key,
      body: { photos_processed: 12 },
    });
    expect(sync.status).toBe(200);
    const { body } = await statsOf(fan);
    expect(body.has_synced).toBe(true);
    expect(body.last_sync_at).toBe(sync.body.last_sync_at);
  });

  test("a hidden event leaves the stats and comes back when unhidden", async () => {
    const hide = await server.call("POST", `/v1/users/${fan}/events/105/hide`, { key });
    expect(hide.status).toBe(200);
    const hidden = (await statsOf(fan)).body;
    expect(hidden.events_count).toBe(5);
    expect(hidden.latest_event.id).toBe(104);
    await server.call("POST", `/v1/users/${fan}/events/105/unhide`, { key });
    expect((await statsOf(fan)).body.events_count).toBe(6);
  });

  test("an event that stops being licensed leaves the stats", async () => {
    await relicense(server.store, 102, false);
    const { body } = await statsOf(fan);
    expect(body.events_count).toBe(5);
    expect(body.top_cities.map((c: { city: string }) => c.city)).not.toContain("Berlin");
    await relicense(server.store, 102, true);
    expect((await statsOf(fan)).body.events_count).toBe(6);
  });

  test("another partner's user is user_not_found", async () => {
    const response = await statsOf(fan, "", otherKey);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("user_not_found");
  });
});
