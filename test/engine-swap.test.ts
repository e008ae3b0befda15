import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { MatchQuery, MatchSettings } from "../src/shards/matcher.ts";
import { startMatchingEngine } from "../src/shards/pollingEngine.ts";
import { openStore, type Store } from "../src/store/db.ts";
import { catalogState, events, venues } from "../src/store/schema/catalog.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const START = new Date("2025-07-04T20:00:00Z");
/** A capture 100 m north of venue `n`'s position, during its event. */
const atVenue = (n: number): MatchQuery => ({
  latitude: 40 + n * 0.05 + 0.0009,
  longitude: -74,
  takenAtMs: START.getTime() + 3_600_000,
});

async function addVenueWithEvent(store: Store, n: number, licensed = true): Promise<void> {
  await store.db.insert(venues).values({
    id: n,
    name: `Venue ${n}`,
    latitude: 40 + n * 0.05,
    longitude: -74,
    timezone: "America/New_York",
    radiusM: n % 2 === 0 ? null : 300,
  });
  await store.db.insert(events).values({
    id: 100 + n,
    name: `Show ${n}`,
    venueId: n,
    startsAtLocal: "2025-07-04T16:00:00",
    startsAt: START,
    endsAt: n % 3 === 0 ? new Date(START.getTime() + 7_200_000) : null,
    licensed,
  });
}

async function bumpVersion(store: Store): Promise<void> {
  await store.db
    .insert(catalogState)
    .values({ id: 1, version: 1n })
    .onConflictDoUpdate({ target: catalogState.id, set: { version: sql`${catalogState.version} + 1` } });
}

describe("live catalog swap on PostgreSQL (WORKERS=2)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await addVenueWithEvent(database.store, 1);
    await bumpVersion(database.store);
  });
  afterAll(async () => {
    await database.drop();
  });

  test("a catalog change swaps generations under concurrent matching with no failed call", async () => {
    const engine = await startMatchingEngine({
      store: database.store,
      settings: SETTINGS,
      shards: 4,
      workers: 2,
      pollSeconds: 3600,
    });
    expect(engine.generation()).toBe(1);
    expect(await engine.match([atVenue(1), atVenue(2)])).toMatchObject([
      { eventId: 101, venueId: 1, licensed: true },
      null,
    ]);

    let stop = false;
    let calls = 0;
    const failures: unknown[] = [];
    const seen = new Set<string>();
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) {
        try {
          const [first, second] = await engine.match([atVenue(1), atVenue(2)]);
          calls++;
          seen.add(`${first?.eventId}/${second?.eventId ?? "none"}`);
        } catch (error) {
          failures.push(error);
        }
      }
    });

    await addVenueWithEvent(database.store, 2, false);
    await bumpVersion(database.store);
    await engine.refresh();
    expect(engine.generation()).toBe(2);
    // Keep matching on the new generation for a while before stopping the load.
    const target = calls + 200;
    while (calls < target && failures.length === 0) await Bun.sleep(1);
    stop = true;
    await Promise.all(loops);

    expect(failures).toEqual([]);
    expect(seen.has("101/102")).toBe(true);
    expect(await engine.match([atVenue(2)])).toMatchObject([{ eventId: 102, venueId: 2, licensed: false }]);
    // Every batch finished, so the old generation has released its workers and buffers.
    expect(engine.openGenerations()).toBe(1);

    await engine.refresh();
    expect(engine.generation()).toBe(2);
    await engine.close();
  });
});

describe("loading the catalog from PGlite (WORKERS=0)", () => {
  let dataDir: string;
  let store: Store;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "rollcall-engine-"));
    store = await openStore({ databaseUrl: null, dataDir });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("matches what the embedded database holds, and picks up a change on refresh", async () => {
    await addVenueWithEvent(store, 3);
    const engine = await startMatchingEngine({
      store,
      settings: SETTINGS,
      shards: 2,
      workers: 0,
      pollSeconds: 3600,
    });
    expect(await engine.match([atVenue(3), atVenue(4)])).toMatchObject([
      { eventId: 103, venueId: 3, licensed: true },
      null,
    ]);
    await addVenueWithEvent(store, 4);
    await bumpVersion(store);
    await engine.refresh();
    expect(engine.generation()).toBe(2);
    expect(await engine.match([atVenue(4)])).toMatchObject([{ eventId: 104, venueId: 4, licensed: true }]);
    await engine.close();
  });
});
