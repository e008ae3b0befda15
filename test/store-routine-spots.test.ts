/**
 * Routine spots across the edge of a venue's core (docs/api.md §15), on both databases: a spot's items
 * are routine together when most of them lie outside the core, its items in the core too, and none is
 * when most lie inside; a batch that tips the balance without adding or removing an event recomputes
 * the events it does not touch. Every check holds the stored confidences to the model and the spot rows
 * to the user's media rows (test/support/confidenceStore.ts). Rows kept before in-core items had cells
 * (in_core and the spot null) count in the core.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { backfillConfidence } from "../src/store/confidenceBackfill.ts";
import type { Store } from "../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { newUser, onBothDatabases } from "./support/batchWrites.ts";
import {
  addCatalog,
  type Event,
  eventById,
  expectModelHeld,
  keptAt,
  metresFrom,
  SETTINGS,
  VENUES,
} from "./support/confidenceStore.ts";

const VENUE = VENUES[0] as (typeof VENUES)[number];
/** One cell (75 to 150 m north) across the core's edge at 100 m: a step inside it and a step outside. */
const IN = metresFrom(VENUE, 90, 20);
const OUT = metresFrom(VENUE, 110, 20);
const CENTRE = metresFrom(VENUE, 0, 0);
const FAR = metresFrom(VENUE, 222, 69);
/** Four nights at the venue. */
const NIGHTS = [9000, 9001, 9002, 9003];

/** An item at `eventId`, `minutes` into the show. */
const item = (mediaId: string, eventId: number, where: typeof IN, minutes: number): KeptMedia =>
  keptAt(mediaId, eventId, where, (eventById.get(eventId) as Event).startsAtMs + minutes * 60_000);

/** Writes `kept` as a batch that accepts those ids only, and returns what the store and the model hold. */
async function send(store: Store, userId: string, kept: KeptMedia[]) {
  await writeBatch(store, { userId, partnerId: "acme", acceptedIds: kept.map((m) => m.mediaId), kept });
  return expectModelHeld(store, userId);
}

const confidenceAt = (state: { stored: (number | null)[][] }, eventId: number) =>
  state.stored.find(([id]) => id === eventId)?.[1];

onBothDatabases("routine spots across the core's edge", (storeOf) => {
  let users = 0;
  const user = async () => {
    const store = storeOf();
    await addCatalog(store);
    return { store, userId: await newUser(store, `routine-${users++}@example.com`) };
  };

  test("a spot mostly outside the core is routine, its item in the core too", async () => {
    const { store, userId } = await user();
    const kept = NIGHTS.flatMap((night) => [
      item(`o${night}`, night, OUT, 10),
      item(`p${night}`, night, OUT, 90),
    ]);
    const state = await send(store, userId, [...kept, item("in", 9000, IN, 50)]);
    expect(state.routine).toBe(9);
    expect(state.routineInCore).toBe(1);
  });

  test("a spot mostly in the core is not routine", async () => {
    const { store, userId } = await user();
    const kept = NIGHTS.flatMap((night) => [
      item(`i${night}`, night, IN, 10),
      item(`j${night}`, night, IN, 90),
      item(`o${night}`, night, OUT, 50),
    ]);
    const state = await send(store, userId, kept);
    expect(state.routine).toBe(0);
  });

  test("a batch that tips a spot's balance recomputes the events it does not touch", async () => {
    const { store, userId } = await user();
    const outside = NIGHTS.map((night) => item(`o${night}`, night, OUT, 30));
    const routine = await send(store, userId, [...outside, item("i0", 9000, IN, 60)]);
    expect(routine.routine).toBe(5);
    // Items in the core at a night the spot already holds: no event comes or goes, the balance tips.
    const inside = [1, 2, 3, 4].map((n) => item(`i${n}`, 9000, IN, 60 + 20 * n));
    const season = await send(store, userId, inside);
    expect(season.routine).toBe(0);
    for (const night of [9001, 9002, 9003]) {
      expect(confidenceAt(season, night)).toBeGreaterThan(confidenceAt(routine, night) ?? 100);
    }
    // Two more outside tip it back.
    const back = await send(store, userId, [item("o5", 9000, OUT, 20), item("o6", 9000, OUT, 25)]);
    expect(back.routine).toBe(11);
    expect(confidenceAt(back, 9001)).toBe(confidenceAt(routine, 9001));
    // An item stepping across the edge within its cell, at the same night, tips it again.
    const stepped = await send(store, userId, [item("o6", 9000, IN, 25)]);
    expect(stepped.routine).toBe(0);
    expect(confidenceAt(stepped, 9001)).toBe(confidenceAt(season, 9001));
  });

  test("an item kept before in-core items had cells counts in the core", async () => {
    const { store, userId } = await user();
    await send(store, userId, [item("centre", 9000, CENTRE, 30), item("far", 9000, FAR, 60)]);
    // As the previous version left them: no cell or core flag in the core, spot rows outside it only.
    await store.rows(sql`update media set in_core = null, spot_row = null, spot_col = null
                         where user_id = ${userId}::uuid and in_core`);
    await store.rows(sql`update user_venue_spots set items = items - core_items, core_items = 0
                         where user_id = ${userId}::uuid`);
    const legacy = await send(store, userId, [item("far2", 9000, FAR, 90)]);
    expect(confidenceAt(legacy, 9000)).toBeGreaterThan(50);
    // The backfill scores it the same, and with `replace` gives it its cell.
    await store.rows(sql`update user_events set confidence = null where user_id = ${userId}::uuid`);
    await backfillConfidence(store, SETTINGS, { replace: false });
    expect((await expectModelHeld(store, userId)).stored).toEqual(legacy.stored);
    await backfillConfidence(store, SETTINGS, { replace: true });
    expect((await expectModelHeld(store, userId)).stored).toEqual(legacy.stored);
    const rows = await store.rows<{ in_core: boolean | null; spot_row: number | null }>(
      sql`select in_core, spot_row from media where user_id = ${userId}::uuid and media_id = 'centre'`,
    );
    expect(rows).toEqual([{ in_core: true, spot_row: 0 }]);
  });

  test("a batch that moves an item kept before in-core items had cells counts its new spot only", async () => {
    const { store, userId } = await user();
    await send(store, userId, [item("centre", 9000, CENTRE, 30), item("far", 9001, FAR, 60)]);
    await store.rows(sql`update media set in_core = null, spot_row = null, spot_col = null
                         where user_id = ${userId}::uuid and in_core`);
    await store.rows(sql`delete from user_venue_spots where user_id = ${userId}::uuid and core_items > 0`);
    await send(store, userId, [item("centre", 9001, FAR, 30)]);
  });
});
