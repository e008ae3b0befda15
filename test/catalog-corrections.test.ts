import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { userConfidenceUpdate } from "../src/store/confidenceSql.ts";
import { claimCorrections } from "../src/store/corrections.ts";
import { createUser, sendMedia } from "./support/catalogFixtures.ts";
import { event, venue } from "./support/catalogImport.ts";
import { type Corrections, keptPlaces, startCorrections } from "./support/corrections.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * Contract §15: after an import corrects an event, every kept item at the events affected is placed
 * again as a re-send would place it, and the history, stats and confidence follow.
 */

const UTC = "Etc/UTC";
const arena = venue(1, UTC, { latitude: 40.75, longitude: -73.99, radius_m: 300 });
const club = venue(2, UTC, { latitude: 40.7, longitude: -74.02, radius_m: 300 });
const photo = (id: string, takenAt: string, at: { latitude: number; longitude: number }) => ({
  id,
  taken_at: takenAt,
  ...at,
});
const AT_ARENA = { latitude: 40.7501, longitude: -73.9901 };
const AT_CLUB = { latitude: 40.7001, longitude: -74.0201 };

let server: TestServer;
let corrections: Corrections;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("p1")).sandbox;
  corrections = await startCorrections(server.store, {
    radiusM: 500,
    beforeMinutes: 120,
    afterMinutes: 60,
    defaultDurationMinutes: 300,
  });
});

afterAll(async () => {
  await corrections.close();
  await server.close();
});

/** Imports lines into the catalog both the server and the runner serve from. */
async function importLines(lines: string[]) {
  const report = await corrections.importLines(lines);
  await server.reloadCatalog();
  return report;
}

async function history(userId: string) {
  const page = await server.call("GET", `/v1/users/${userId}/events?include_media=false`, { key });
  const events = page.body.events as { id: number; media_count: number }[];
  return events.map((e) => [e.id, e.media_count]).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
}

describe("catalog corrections", () => {
  test("a reschedule moves kept items off the old date; the event leaves the history and the stats", async () => {
    await importLines([
      arena,
      club,
      event(10, 1, "2025-06-01T20:00:00"),
      event(11, 2, "2025-06-01T20:00:00"),
    ]);
    const user = await createUser(server, key, "moved@example.com");
    const sent = await sendMedia(server, key, user, [
      photo("a1", "2025-06-01T21:00:00Z", AT_ARENA),
      photo("a2", "2025-06-01T21:30:00Z", AT_ARENA),
      photo("c1", "2025-06-01T21:00:00Z", AT_CLUB),
    ]);
    expect(sent.body.matched).toBe(3);
    expect(await history(user)).toEqual([
      [10, 2],
      [11, 1],
    ]);

    const report = await importLines([event(10, 1, "2025-06-08T20:00:00")]);
    expect(report.correctedEvents).toBe(1);
    // Only the corrected event's items are placed again: the club's show is out of its reach.
    expect(await corrections.drain()).toEqual({ events: 1, items: 2, moved: 0, removed: 2 });
    expect(await keptPlaces(server.store, user)).toEqual({ c1: 11 });
    expect(await history(user)).toEqual([[11, 1]]);
    const stats = await server.call("GET", `/v1/users/${user}/stats`, { key });
    expect(stats.body.events_count).toBe(1);
    expect(stats.body.media_count).toBe(1);
  });

  test("an event moved onto another's place and time draws the items it now matches better", async () => {
    // The photo is in event 20's padding after its end (15:00 plus the default five hours).
    await importLines([event(20, 1, "2025-07-01T15:00:00"), event(21, 2, "2025-07-01T20:00:00")]);
    const user = await createUser(server, key, "drawn@example.com");
    await sendMedia(server, key, user, [photo("d1", "2025-07-01T20:05:00Z", AT_ARENA)]);
    expect(await keptPlaces(server.store, user)).toEqual({ d1: 20 });

    // Event 21 moves from the club to the arena, starting when the photo was taken.
    const report = await importLines([event(21, 1, "2025-07-01T20:00:00")]);
    expect(report.correctedEvents).toBe(1);
    const done = await corrections.drain();
    expect(done.moved).toBe(1);
    expect(await keptPlaces(server.store, user)).toEqual({ d1: 21 });
    expect(await history(user)).toEqual([[21, 1]]);
  });

  test("a cancellation removes the event's kept items; a postponement too; the show's return brings nothing back", async () => {
    await importLines([event(40, 1, "2025-09-01T20:00:00"), event(41, 2, "2025-09-01T20:00:00")]);
    const user = await createUser(server, key, "cancelled@example.com");
    await sendMedia(server, key, user, [
      photo("x1", "2025-09-01T21:00:00Z", AT_ARENA),
      photo("y1", "2025-09-01T21:00:00Z", AT_CLUB),
    ]);
    const report = await importLines([
      event(40, 1, "2025-09-01T20:00:00", { status: "cancelled" }),
      event(41, 2, "2025-09-01T20:00:00", { status: "postponed" }),
    ]);
    expect(report.correctedEvents).toBe(2);
    expect(await corrections.drain()).toEqual({ events: 2, items: 2, moved: 0, removed: 2 });
    expect(await keptPlaces(server.store, user)).toEqual({});
    expect(await history(user)).toEqual([]);
    // Items that were let go are the partner's to send again, as after any re-send that matched nothing.
    await importLines([event(40, 1, "2025-09-01T20:00:00", { status: "rescheduled" })]);
    expect(await corrections.drain()).toEqual({ events: 1, items: 0, moved: 0, removed: 0 });
    await sendMedia(server, key, user, [photo("x1", "2025-09-01T21:00:00Z", AT_ARENA)]);
    expect(await keptPlaces(server.store, user)).toEqual({ x1: 40 });
  });

  test("a batch matched on an index older than the catalog it was written under is corrected too", async () => {
    await importLines([event(50, 1, "2025-10-01T20:00:00")]);
    const user = await createUser(server, key, "stale@example.com");
    // The runner's index holds the reschedule and drains it; the API server's index does not yet.
    await corrections.importLines([event(50, 1, "2025-10-08T20:00:00")]);
    await corrections.drain();
    await sendMedia(server, key, user, [photo("s1", "2025-10-01T21:00:00Z", AT_ARENA)]);
    expect(await keptPlaces(server.store, user)).toEqual({ s1: 50 });
    expect(await corrections.drain()).toMatchObject({ items: 1, removed: 1 });
    expect(await keptPlaces(server.store, user)).toEqual({});
    await server.reloadCatalog();
  });

  test("an event's end corrected with its items still inside: their confidence follows", async () => {
    await importLines([event(60, 2, "2025-11-01T20:00:00")]);
    const user = await createUser(server, key, "span@example.com");
    await sendMedia(server, key, user, [
      photo("e1", "2025-11-01T20:10:00Z", AT_CLUB),
      photo("e2", "2025-11-01T21:00:00Z", AT_CLUB),
    ]);
    const stored = async () => {
      const [row] = await server.store.rows<{ confidence: number }>(
        sql`select confidence from user_events where user_id = ${user}::uuid and event_id = 60`,
      );
      return row?.confidence;
    };
    const before = await stored();
    // The show now ends at 21:10: both photos still match it, and they span most of it.
    const report = await importLines([
      event(60, 2, "2025-11-01T20:00:00", { ends_at_local: "2025-11-01T21:10:00" }),
    ]);
    expect(report.correctedEvents).toBe(1);
    expect(await corrections.drain()).toMatchObject({ items: 2, moved: 0, removed: 0 });
    const after = await stored();
    expect(after).not.toBe(before);
    // The same as every history row of the user scored again from scratch.
    await server.store.rows(userConfidenceUpdate(user, 300));
    expect(await stored()).toBe(after);
  });

  test("an unchanged import or a renamed event queues nothing and keeps placements", async () => {
    const before = await corrections.importLines([arena, club]);
    expect(before.correctedEvents).toBe(0);
    const renamed = await importLines([event(11, 2, "2025-06-01T20:00:00", { name: "Renamed show" })]);
    expect(renamed.correctedEvents).toBe(0);
    expect(renamed.version).toBe(before.version + 1);
    expect(await corrections.drain()).toEqual({ events: 0, items: 0, moved: 0, removed: 0 });
  });

  test("a correction waits for an index that holds it, and an instance that stopped half-way is taken over", async () => {
    const user = await createUser(server, key, "lease@example.com");
    await importLines([event(30, 2, "2025-08-01T20:00:00")]);
    await sendMedia(server, key, user, [photo("l1", "2025-08-01T21:00:00Z", AT_CLUB)]);
    const { version } = await server.database.store
      .rows<{ version: string }>(sql`select version::text from catalog_state`)
      .then((rows) => ({ version: Number(rows[0]?.version) }));
    await corrections.importLines([event(30, 2, "2025-08-09T20:00:00")]);
    // An instance whose index is older than the import cannot place it yet.
    expect(await claimCorrections(server.store, version, 10)).toEqual([]);
    // Another instance claims it and stops: its lease holds the event until it runs out.
    const claimed = await claimCorrections(server.store, version + 10, 10);
    expect(claimed.map((c) => c.eventId)).toEqual([30]);
    expect(await corrections.drain()).toEqual({ events: 0, items: 0, moved: 0, removed: 0 });
    await server.store.rows(sql`update catalog_corrections set leased_until = now() - interval '1 second'`);
    expect(await corrections.drain()).toEqual({ events: 1, items: 1, moved: 0, removed: 1 });
    expect(await keptPlaces(server.store, user)).toEqual({});
    const [left] = await server.store.rows<{ n: number }>(
      sql`select count(*)::int as n from catalog_corrections`,
    );
    expect(left?.n).toBe(0);
  });
});
