import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { events, venues } from "../src/store/schema/index.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { keepMedia } from "./support/userEvents.ts";

let server: TestServer;
let key: string;
let otherKey: string;
let userId: string;

const NIGHT = new Date("2025-07-05T00:00:00Z");

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  otherKey = (await server.partner("globex")).sandbox;
  await server.store.db.insert(venues).values({
    id: 1,
    name: "Garden",
    city: "New York",
    region: "NY",
    country: "US",
    latitude: 40.7505,
    longitude: -73.9934,
    timezone: "America/New_York",
    radiusM: 300,
  });
  await server.store.db.insert(events).values(
    [100, 101, 102, 103].map((id) => ({
      id,
      name: `Show ${id}`,
      venueId: 1,
      startsAtLocal: `2025-07-0${id - 96}T20:00:00`,
      startsAt: new Date(NIGHT.getTime() + (id - 100) * 86_400_000),
    })),
  );
  await server.reloadCatalog();
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "hider@example.com" } })).body
    .user_id;
  await keepMedia(server.store, userId, [
    { eventId: 101, startsAt: new Date(NIGHT.getTime() + 86_400_000), photos: 2 },
    // Its media were all re-evaluated away: nothing kept, nothing to hide.
    { eventId: 102, startsAt: new Date(NIGHT.getTime() + 2 * 86_400_000), photos: 0 },
  ]);
});

afterAll(async () => {
  await server.close();
});

const post = (path: string, options: { apiKey?: string; body?: unknown; rawBody?: string } = {}) =>
  server.call("POST", path, { key: options.apiKey ?? key, body: options.body, rawBody: options.rawBody });
const hide = (eventId: number | string, apiKey = key, user = userId) =>
  post(`/v1/users/${user}/events/${eventId}/hide`, { apiKey });
const unhide = (eventId: number | string, apiKey = key, user = userId) =>
  post(`/v1/users/${user}/events/${eventId}/unhide`, { apiKey });
const eventIds = async (): Promise<number[]> =>
  (await server.call("GET", `/v1/users/${userId}/events`, { key })).body.events.map(
    (e: { id: number }) => e.id,
  );

describe("hide and unhide", () => {
  test("hide and unhide are idempotent and answer {event_id, hidden}", async () => {
    for (const [call, hidden] of [
      [hide, true],
      [hide, true],
      [unhide, false],
      [unhide, false],
    ] as const) {
      const response = await call(101);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ event_id: 101, hidden });
    }
  });

  test("a matched event disappears from the history and stats when hidden, and stays hidden after re-matching", async () => {
    const item = { id: "img-1", taken_at: "2025-07-05T01:00:00Z", latitude: 40.7506, longitude: -73.9935 };
    const batch = await post(`/v1/users/${userId}/media`, { body: { media: [item] } });
    expect(batch.status).toBe(200);
    expect(batch.body.matches[0].event_id).toBe(100);
    expect(await eventIds()).toContain(100);

    expect((await hide(100)).body).toEqual({ event_id: 100, hidden: true });
    expect(await eventIds()).not.toContain(100);
    const stats = (await server.call("GET", `/v1/users/${userId}/stats`, { key })).body;
    expect(stats.events_count).toBe(1);

    // Batches still report the match (they are the result for that batch); the history keeps it hidden.
    const again = await post(`/v1/users/${userId}/media`, { body: { media: [{ ...item, id: "img-2" }] } });
    expect(again.body.matches[0].event_id).toBe(100);
    expect(await eventIds()).not.toContain(100);

    await unhide(100);
    expect(await eventIds()).toContain(100);
  });

  test("an event without kept media for this user, or past the catalog's id range, is event_not_found", async () => {
    for (const eventId of [
      102,
      103,
      999_999,
      "2147483648",
      "99999999999",
      "123456789012345678901234567890",
    ]) {
      for (const call of [hide, unhide]) {
        const response = await call(eventId);
        expect([eventId, response.status, response.body.error.code]).toEqual([
          eventId,
          404,
          "event_not_found",
        ]);
      }
    }
  });

  test("an unknown user, or another partner's, is user_not_found before the event is looked at", async () => {
    for (const call of [hide, unhide]) {
      const foreign = await call(101, otherKey);
      expect([foreign.status, foreign.body.error.code]).toEqual([404, "user_not_found"]);
      for (const eventId of [999_999, "2147483648"]) {
        const unknown = await call(eventId, key, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
        expect([unknown.status, unknown.body.error.code]).toEqual([404, "user_not_found"]);
      }
    }
    expect((await hide(101)).status).toBe(200);
    await unhide(101);
  });

  test("a malformed event_id is invalid_request", async () => {
    for (const eventId of ["0", "-1", "abc", "1.5", "1e3", "01x", "%31%00"]) {
      const response = await hide(eventId);
      expect([eventId, response.status, response.body.error.code]).toEqual([eventId, 400, "invalid_request"]);
    }
  });

  test("a body is optional; when sent it must be a JSON object", async () => {
    const path = `/v1/users/${userId}/events/101/hide`;
    expect((await post(path, { rawBody: "" })).status).toBe(200);
    expect((await post(path, { body: { reason: "ex" } })).status).toBe(200);
    for (const body of [[], "x", 5]) {
      const response = await post(path, { body });
      expect([body, response.status, response.body.error.code]).toEqual([body, 400, "invalid_request"]);
    }
    await unhide(101);
  });
});
