/**
 * Feed events through the API (docs/operations.md §3, docs/api.md §4 and §15): catalogs imported by the
 * CLI from Ticketmaster and SeatGeek answer pages, then batches of photos at each trap those pages hold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { itemConfidence, itemPlace } from "../src/confidence/confidence.ts";
import { createUser, sendMedia } from "./support/catalogFixtures.ts";
import { runCli } from "./support/cli.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "feeds");
const SETTINGS = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };
const GARDEN = { latitude: 40.7505005, longitude: -73.9916006 };
const POLO_CLUB = { latitude: 33.6803, longitude: -116.2374 };
const THE_O2 = { latitude: 51.503, longitude: 0.0032 };

let server: TestServer;
let key: string;
let users = 0;
const ids = new Map<string, number>();

beforeAll(async () => {
  server = await startTestServer({
    MATCH_RADIUS_M: String(SETTINGS.radiusM),
    MATCH_BEFORE_MINUTES: String(SETTINGS.beforeMinutes),
    MATCH_AFTER_MINUTES: String(SETTINGS.afterMinutes),
    MATCH_DEFAULT_DURATION_MINUTES: String(SETTINGS.defaultDurationMinutes),
  });
  key = (await server.partner("acme")).sandbox;
  for (const [format, file] of [
    ["ticketmaster", "ticketmaster-page.json"],
    ["seatgeek", "seatgeek-pages.jsonl"],
  ]) {
    const result = await runCli(server.database.url, [
      "catalog",
      "import",
      "--format",
      format ?? "",
      join(FIXTURES, file ?? ""),
    ]);
    if (result.code !== 0) throw new Error(result.stderr);
  }
  await server.reloadCatalog();
  const rows = await server.store.rows<{ external_id: string; id: number }>(
    sql`select external_id, id from external_ids where kind = 'event'`,
  );
  for (const row of rows) ids.set(row.external_id, row.id);
});

afterAll(async () => {
  await server.close();
});

const eventId = (externalId: string) => ids.get(externalId) ?? -1;
const photo = (id: string, takenAt: string, where = GARDEN) => ({ id, taken_at: takenAt, ...where });

type Match = { media_id: string; matched: boolean; event_id: number | null; confidence: number | null };
type EventBody = { id: number; starts_at_local: string; time_unknown?: boolean; confidence: number };

async function send(media: unknown[]): Promise<{ userId: string; matches: Match[]; events: EventBody[] }> {
  const userId = await createUser(server, key, `feeds${++users}@example.com`);
  const response = await sendMedia(server, key, userId, media);
  expect(response.status).toBe(200);
  return { userId, matches: response.body.matches, events: response.body.events };
}

describe("feed events in batches and histories", () => {
  test("a show from both feeds is one event in the history", async () => {
    const show = eventId("vvG1zZ9pbKjzAs");
    expect(eventId("5001")).toBe(show);
    const { userId, matches } = await send([
      photo("a", "2025-07-05T00:30:00Z"),
      photo("b", "2025-07-05T02:00:00Z"),
    ]);
    expect(matches.map((m) => m.event_id)).toEqual([show, show]);
    const history = await server.call("GET", `/v1/users/${userId}/events`, { key });
    expect(history.body.events.map((e: EventBody) => e.id)).toEqual([show]);
    expect(history.body.events[0]).not.toHaveProperty("time_unknown");
    // Attractions' genres, else their segment, are the performers' categories.
    expect(
      history.body.events[0].performers.map((p: { name: string; category: string }) => [p.name, p.category]),
    ).toEqual([
      ["The Example Band", "Rock"],
      ["Opening Act", "Music"],
    ]);
  });

  test("a photo at a cancelled, a postponed or a date-to-be-decided show matches nothing", async () => {
    const { matches } = await send([
      photo("cancelled", "2025-07-06T01:00:00Z"),
      photo("postponed", "2025-07-07T01:00:00Z"),
      photo("cancelled on seatgeek", "2025-07-13T23:30:00Z"),
      photo("date tbd", "2025-08-01T19:00:00Z"),
    ]);
    expect(matches.map((m) => m.matched)).toEqual([false, false, false, false]);
  });

  test("a rescheduled show matches at its new date and time", async () => {
    const { matches } = await send([photo("moved", "2025-07-09T02:00:00Z")]);
    expect(matches[0]?.event_id).toBe(eventId("vvG1zZ9pResche"));
  });

  test("a photo on a TBA show's day matches it over the whole day, with lower confidence", async () => {
    const timed = await send([photo("timed", "2025-07-05T01:00:00Z")]);
    const { userId, matches, events } = await send([photo("afternoon", "2025-07-10T19:00:00Z")]);
    const tba = eventId("vvG1zZ9pTimeTBA");
    expect(matches[0]?.event_id).toBe(tba);
    expect(events[0]).toMatchObject({ id: tba, starts_at_local: "2025-07-10T00:00:00", time_unknown: true });
    const place = itemPlace(
      { ...GARDEN, takenAtMs: Date.parse("2025-07-10T19:00:00Z") },
      { ...GARDEN, radiusM: null },
      { startsAtMs: Date.parse("2025-07-10T04:00:00Z"), endsAtMs: Date.parse("2025-07-11T04:00:00Z") },
      SETTINGS,
    );
    expect(matches[0]?.confidence).toBe(itemConfidence(place, true, true));
    expect(matches[0]?.confidence ?? 1).toBeLessThan(timed.matches[0]?.confidence ?? 0);
    expect(events[0]?.confidence ?? 1).toBeLessThan(timed.events[0]?.confidence ?? 0);
    const history = await server.call("GET", `/v1/users/${userId}/events`, { key });
    expect(history.body.events[0]).toMatchObject({
      id: tba,
      time_unknown: true,
      confidence: events[0]?.confidence,
    });
  });

  test("a show with no specific time matches any time that day", async () => {
    const { matches, events } = await send([photo("morning", "2025-07-11T14:00:00Z")]);
    expect(matches[0]?.event_id).toBe(eventId("vvG1zZ9pNoSpec"));
    expect(events[0]).toMatchObject({ starts_at_local: "2025-07-11T00:00:00", time_unknown: true });
  });

  test("SeatGeek's placeholder time is not a time: a photo that afternoon matches", async () => {
    const { matches, events } = await send([photo("jam", "2025-07-12T20:00:00Z")]);
    expect(matches[0]?.event_id).toBe(eventId("5002"));
    expect(events[0]?.time_unknown).toBe(true);
  });

  test("a multi-day festival matches on its second day; its venue's zone came from its coordinates", async () => {
    const { matches } = await send([
      photo("day two", "2025-04-12T22:00:00Z", POLO_CLUB),
      // 07:00 at the venue, five hours before the gates: in UTC this would be inside the festival.
      photo("dawn", "2025-04-11T14:00:00Z", POLO_CLUB),
    ]);
    expect(matches.map((m) => m.event_id)).toEqual([eventId("vvG1zZ9pFestiv"), null]);
  });

  test("an event listing several venues is placed at the one with coordinates", async () => {
    const { matches } = await send([photo("london", "2025-09-20T19:00:00Z", THE_O2)]);
    expect(matches[0]?.event_id).toBe(eventId("vvG1zZ9pTwoVen"));
  });
});
