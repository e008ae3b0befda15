/**
 * The attendance confidence a batch stores (user_events.confidence, docs/api.md §15), on both databases
 * the service runs on: after every batch of a random sequence, each history row holds what the pure
 * model (test/support/confidenceModel.ts) gives for all of the user's kept items at that event, routine spots found
 * over all of the user's kept items at the venue. The batches move items between events, spots and
 * the core, drop them, re-send them unchanged, so spots turn routine and back. Two of the events know
 * their date and not their time (a whole UTC day), where the evidence counts at timeUnknownShare.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { itemPlace, itemWeight, spotCell } from "../src/confidence/confidence.ts";
import { backfillConfidence } from "../src/store/confidenceBackfill.ts";
import type { Store } from "../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { kept, newUser, onBothDatabases } from "./support/batchWrites.ts";
import { type EventItem, eventConfidence, routineFlags } from "./support/confidenceModel.ts";

const SETTINGS = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type Venue = { id: number; latitude: number; longitude: number; radiusM: number };
type Event = { id: number; venue: Venue; startsAtMs: number; endsAtMs: number | null; timeUnknown: boolean };

const VENUES: Venue[] = [
  { id: 900, latitude: 51.5, longitude: -0.12, radiusM: 500 },
  { id: 901, latitude: 51.51, longitude: -0.1, radiusM: 300 },
];
const FIRST_START = Date.UTC(2025, 5, 1, 19);
/** Six nights at the first venue (some without an end, one of unknown time), two at the second (one). */
const EVENTS: Event[] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) =>
  n === 4 || n === 7
    ? {
        id: 9000 + n,
        venue: (n < 6 ? VENUES[0] : VENUES[1]) as Venue,
        startsAtMs: Date.UTC(2025, 5, 1) + n * DAY,
        endsAtMs: Date.UTC(2025, 5, 1) + (n + 1) * DAY,
        timeUnknown: true,
      }
    : {
        id: 9000 + n,
        venue: (n < 6 ? VENUES[0] : VENUES[1]) as Venue,
        startsAtMs: FIRST_START + n * DAY,
        endsAtMs: n % 3 === 0 ? null : FIRST_START + n * DAY + (2 + (n % 4)) * HOUR,
        timeUnknown: false,
      },
);
const eventById = new Map(EVENTS.map((e) => [e.id, e]));

async function addCatalog(store: Store): Promise<void> {
  for (const v of VENUES) {
    await store.rows(sql`insert into venues (id, name, latitude, longitude, timezone, radius_m)
      values (${v.id}, 'Spot test', ${v.latitude}, ${v.longitude}, 'UTC', ${v.radiusM})
      on conflict (id) do nothing`);
  }
  for (const e of EVENTS) {
    const start = new Date(e.startsAtMs).toISOString();
    await store.rows(sql`insert into events (id, name, venue_id, starts_at_local, starts_at, ends_at, time_unknown)
      values (${e.id}, 'Night', ${e.venue.id}, ${start.slice(0, 19)}, ${start}::timestamptz,
              ${e.endsAtMs === null ? null : new Date(e.endsAtMs).toISOString()}::timestamptz, ${e.timeUnknown})
      on conflict (id) do nothing`);
  }
}

/** A few metres-apart places per venue: the centre (core) and three spots out towards the edge. */
const SPOTS: [number, number][] = [
  [0, 0],
  [0.002, 0.001],
  [-0.0025, 0.0012],
  [0.0011, -0.003],
];

const itemArb = fc.record({
  id: fc.integer({ min: 0, max: 11 }),
  event: fc.constantFrom(...EVENTS.map((e) => e.id)),
  spot: fc.integer({ min: 0, max: SPOTS.length - 1 }),
  jitter: fc.integer({ min: -3, max: 3 }),
  /** Minutes from two hours before the start. */
  minute: fc.integer({ min: 0, max: 400 }),
  keep: fc.boolean(),
});
type Item = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;
const batchArb = fc.array(itemArb, { minLength: 1, maxLength: 10 });

/** An item as the API would keep it: the matcher's place worked out again, its weight and spot cell. */
function keptItem(item: Item): KeptMedia {
  const event = eventById.get(item.event) as Event;
  const [dLat, dLng] = SPOTS[item.spot] as [number, number];
  const latitude = event.venue.latitude + dLat + item.jitter * 0.00001;
  const longitude = event.venue.longitude + dLng + item.jitter * 0.00001;
  const takenAtMs = event.startsAtMs - 2 * HOUR + item.minute * 60_000;
  const place = itemPlace({ latitude, longitude, takenAtMs }, event.venue, event, SETTINGS);
  return {
    ...kept(`m${item.id}`, event.id),
    venueId: event.venue.id,
    takenAt: new Date(takenAtMs).toISOString(),
    latitude,
    longitude,
    spot: spotCell({ latitude, longitude }, event.venue),
    weight: itemWeight(place),
  };
}

/** Each history row's confidence as stored, with what it must be. */
async function storedAndExpected(store: Store, userId: string) {
  const { expected, routine } = await expectedOf(store, userId);
  const stored = await store.rows<{ event_id: number; confidence: number | null }>(
    sql`select event_id, confidence from user_events where user_id = ${userId}::uuid order by event_id`,
  );
  return {
    stored: stored.map((row) => [row.event_id, row.confidence]),
    expected: stored.map((row) => [row.event_id, expected.get(row.event_id) ?? 0]),
    routine,
  };
}

/** What each history row's confidence must be, from the user's media rows as stored. */
async function expectedOf(
  store: Store,
  userId: string,
): Promise<{ expected: Map<number, number>; routine: number }> {
  const rows = await store.rows<{
    event_id: number;
    latitude: number;
    longitude: number;
    taken_ms: number;
  }>(sql`
    select event_id, latitude, longitude, (extract(epoch from taken_at) * 1000)::float8 as taken_ms
    from media where user_id = ${userId}::uuid`);
  const expected = new Map<number, number>();
  let routine = 0;
  for (const venue of VENUES) {
    const here = rows.filter((r) => (eventById.get(r.event_id) as Event).venue.id === venue.id);
    const flags = routineFlags(
      here.map((r) => ({ eventId: r.event_id, latitude: r.latitude, longitude: r.longitude })),
      venue,
    );
    routine += flags.filter(Boolean).length;
    const byEvent = new Map<number, EventItem[]>();
    here.forEach((r, i) => {
      const event = eventById.get(r.event_id) as Event;
      const item = { latitude: r.latitude, longitude: r.longitude, takenAtMs: r.taken_ms };
      const list = byEvent.get(r.event_id) ?? [];
      list.push({
        ...itemPlace(item, venue, event, SETTINGS),
        takenAtMs: r.taken_ms,
        inCore: spotCell(item, venue) === null,
        routine: flags[i] === true,
      });
      byEvent.set(r.event_id, list);
    });
    for (const [eventId, items] of byEvent) {
      const event = eventById.get(eventId) as Event;
      const end = event.endsAtMs ?? event.startsAtMs + SETTINGS.defaultDurationMinutes * 60_000;
      const confidence = eventConfidence(items, event.startsAtMs, end, undefined, event.timeUnknown);
      expected.set(eventId, Math.round(confidence * 100));
    }
  }
  return { expected, routine };
}

onBothDatabases("stored confidence", (storeOf) => {
  test("every batch leaves each history row's confidence as the model gives it", async () => {
    const store = storeOf();
    await addCatalog(store);
    let users = 0;
    let routineSeen = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(batchArb, { minLength: 1, maxLength: 8 }), async (batches) => {
        const userId = await newUser(store, `confidence-${users++}@example.com`);
        for (const batch of batches) {
          const byId = new Map(batch.map((item) => [`m${item.id}`, item]));
          const kept = [...byId.values()].filter((item) => item.keep).map(keptItem);
          await writeBatch(store, { userId, partnerId: "acme", acceptedIds: [...byId.keys()], kept });
          const { stored, expected, routine } = await storedAndExpected(store, userId);
          routineSeen += routine;
          expect(stored).toEqual(expected);
        }
      }),
      { numRuns: 25, seed: 20261126 },
    );
    // The sequences did make spots routine, or the test would not hold the store to the routine rule.
    expect(routineSeen).toBeGreaterThan(0);
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
          await store.rows(sql`update media set weight = null, spot_row = null, spot_col = null
                             where user_id = ${userId}::uuid`);
          await store.rows(sql`update user_events set confidence = null where user_id = ${userId}::uuid`);
          await store.rows(sql`delete from user_venue_spots where user_id = ${userId}::uuid`);
          await backfillConfidence(store, SETTINGS, { replace: false });
          let { stored, expected } = await storedAndExpected(store, userId);
          expect(stored).toEqual(expected);
          // Batches after it go on from what it left.
          await write(later);
          ({ stored, expected } = await storedAndExpected(store, userId));
          expect(stored).toEqual(expected);
        },
      ),
      { numRuns: 10, seed: 20261127 },
    );
    expect((await backfillConfidence(store, SETTINGS, { replace: false })).users).toBe(0);
  }, 120_000);
});
