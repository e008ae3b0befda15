/**
 * The attendance confidence a batch stores (user_events.confidence, docs/api.md §15), on both databases
 * the service runs on: after every batch of a random sequence, each history row holds what the pure
 * model (test/support/confidenceModel.ts) gives for all of the user's kept items at that event, routine
 * spots found over all of the user's kept items at the venue, and the spot rows count the user's items.
 * The batches move items between events, spots and the core, across the core's edge within a spot,
 * drop them, re-send them unchanged, so spots turn routine and back. Two of the events know their date
 * and not their time (a whole UTC day), where the evidence counts at timeUnknownShare.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { backfillConfidence } from "../src/store/confidenceBackfill.ts";
import { writeBatch } from "../src/store/ingest.ts";
import { newUser, onBothDatabases } from "./support/batchWrites.ts";
import {
  addCatalog,
  EVENTS,
  type Event,
  eventById,
  expectModelHeld,
  HOUR,
  keptAt,
  metresFrom,
  SETTINGS,
} from "./support/confidenceStore.ts";

/**
 * Places per venue, in metres north and east of its centre: the centre (core), three spots out towards
 * the edge, and a step either side of the first venue's core edge at 100 m (90 and 110 m, one cell, the
 * centre's cells in its neighbourhood; both outside the second venue's 75 m core). Those two are drawn
 * most, so the spot's balance of items in and outside the core tips either way.
 */
const PLACES: [number, number][] = [
  [0, 0],
  [222, 69],
  [-278, 83],
  [122, -208],
  [90, 20],
  [110, 20],
];
const PLACE_DRAWS = [0, 1, 2, 3, 4, 4, 5, 5, 5, 5];

const itemArb = fc.record({
  id: fc.integer({ min: 0, max: 19 }),
  event: fc.constantFrom(...EVENTS.map((e) => e.id)),
  place: fc.constantFrom(...PLACE_DRAWS),
  /** A few metres either way, the same north and east. */
  jitter: fc.integer({ min: -3, max: 3 }),
  /** Minutes from two hours before the start. */
  minute: fc.integer({ min: 0, max: 400 }),
  keep: fc.boolean(),
});
type Item = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;
const batchArb = fc.array(itemArb, { minLength: 1, maxLength: 10 });

function keptItem(item: Item) {
  const event = eventById.get(item.event) as Event;
  const [north, east] = PLACES[item.place] as [number, number];
  const where = metresFrom(event.venue, north + item.jitter, east + item.jitter);
  return keptAt(`m${item.id}`, event.id, where, event.startsAtMs - 2 * HOUR + item.minute * 60_000);
}

onBothDatabases("stored confidence", (storeOf) => {
  test("every batch leaves each history row's confidence as the model gives it", async () => {
    const store = storeOf();
    await addCatalog(store);
    let users = 0;
    let routineSeen = 0;
    let routineInCoreSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(batchArb, { minLength: 1, maxLength: 8 }), async (batches) => {
        const userId = await newUser(store, `confidence-${users++}@example.com`);
        for (const batch of batches) {
          const byId = new Map(batch.map((item) => [`m${item.id}`, item]));
          const kept = [...byId.values()].filter((item) => item.keep).map(keptItem);
          await writeBatch(store, { userId, partnerId: "acme", acceptedIds: [...byId.keys()], kept });
          const state = await expectModelHeld(store, userId);
          routineSeen += state.routine;
          routineInCoreSeen += state.routineInCore;
        }
      }),
      { numRuns: 25, seed: 20261126 },
    );
    // The sequences did make spots routine, some across the core's edge, or the test would not hold the
    // store to the routine rule.
    expect(routineSeen).toBeGreaterThan(0);
    expect(routineInCoreSeen).toBeGreaterThan(0);
  }, 120_000);

  test("the backfill computes what a batch would have for items and rows from before confidence", async () => {
    const store = storeOf();
    await addCatalog(store);
    let users = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchArb, { minLength: 1, maxLength: 5 }),
        batchArb,
        async (batches, later) => {
          const userId = await newUser(store, `backfill-${users++}@example.com`);
          const write = (batch: Item[]) => {
            const byId = new Map(batch.map((item) => [`m${item.id}`, item]));
            const kept = [...byId.values()].filter((item) => item.keep).map(keptItem);
            return writeBatch(store, { userId, partnerId: "acme", acceptedIds: [...byId.keys()], kept });
          };
          for (const batch of batches) await write(batch);
          // As the upgrade leaves a database: no weights, spots or confidences.
          await store.rows(sql`update media set weight = null, spot_row = null, spot_col = null, in_core = null
                             where user_id = ${userId}::uuid`);
          await store.rows(sql`update user_events set confidence = null where user_id = ${userId}::uuid`);
          await store.rows(sql`delete from user_venue_spots where user_id = ${userId}::uuid`);
          await backfillConfidence(store, SETTINGS, { replace: false });
          await expectModelHeld(store, userId);
          // Batches after it go on from what it left.
          await write(later);
          await expectModelHeld(store, userId);
        },
      ),
      { numRuns: 10, seed: 20261127 },
    );
    expect((await backfillConfidence(store, SETTINGS, { replace: false })).users).toBe(0);
  }, 120_000);
});
