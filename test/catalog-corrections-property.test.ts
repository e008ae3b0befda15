import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import type { IndexEvent, IndexVenue, MatchSettings } from "../src/shards/matcher.ts";
import { ReferenceMatcher } from "../src/shards/reference.ts";
import { createUser, sendMedia } from "./support/catalogFixtures.ts";
import { event, venue } from "./support/catalogImport.ts";
import { type Corrections, startCorrections } from "./support/corrections.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * Contract §15's promise as a property: after any sequence of imports (events added, moved to another
 * venue, re-timed, given or stripped of an end) and batches, once the corrections are drained every kept
 * item is where the brute-force reference, on the catalog as it now is, puts it, and every history row
 * counts exactly the items kept there.
 */

const SETTINGS: MatchSettings = {
  radiusM: 400,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 180,
};
const HOUR = 3_600_000;
/** Three venues: two whose circles overlap, one apart. Each run has its own ids and its own day. */
const PLACES = [
  { latitude: 51.5, longitude: -0.12 },
  { latitude: 51.503, longitude: -0.12 },
  { latitude: 51.6, longitude: -0.3 },
];

type EventState = { venue: number; startHour: number; hours: number | null };
type Step =
  | { kind: "import"; events: { slot: number; state: EventState }[] }
  | { kind: "batch"; photos: { place: number; hour: number; north: number }[] };

const eventState = fc.record({
  venue: fc.integer({ min: 0, max: 2 }),
  startHour: fc.integer({ min: 8, max: 22 }),
  hours: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("import" as const),
    events: fc.array(fc.record({ slot: fc.integer({ min: 0, max: 5 }), state: eventState }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
  fc.record({
    kind: fc.constant("batch" as const),
    photos: fc.array(
      fc.record({
        place: fc.integer({ min: 0, max: 2 }),
        hour: fc.double({ min: 6, max: 30, noNaN: true }),
        north: fc.integer({ min: -300, max: 300 }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  }),
);

/** A catalog and a camera roll first, so that later imports have kept items to correct. */
const firstSteps: fc.Arbitrary<Step[]> = fc.tuple(
  fc
    .array(eventState, { minLength: 6, maxLength: 6 })
    .map((states): Step => ({ kind: "import", events: states.map((state, slot) => ({ slot, state })) })),
  fc
    .array(
      fc.record({
        place: fc.integer({ min: 0, max: 2 }),
        hour: fc.double({ min: 6, max: 30, noNaN: true }),
        north: fc.integer({ min: -300, max: 300 }),
      }),
      { minLength: 10, maxLength: 20 },
    )
    .map((photos): Step => ({ kind: "batch", photos })),
);

let server: TestServer;
let corrections: Corrections;
let key: string;
let run = 0;

beforeAll(async () => {
  server = await startTestServer(
    Object.fromEntries(
      Object.entries({
        MATCH_RADIUS_M: SETTINGS.radiusM,
        MATCH_BEFORE_MINUTES: SETTINGS.beforeMinutes,
        MATCH_AFTER_MINUTES: SETTINGS.afterMinutes,
        MATCH_DEFAULT_DURATION_MINUTES: SETTINGS.defaultDurationMinutes,
      }).map(([name, value]) => [name, String(value)]),
    ),
  );
  key = (await server.partner("p1")).sandbox;
  corrections = await startCorrections(server.store, SETTINGS);
});

afterAll(async () => {
  await corrections.close();
  await server.close();
});

const localText = (ms: number) => new Date(ms).toISOString().slice(0, 19);

test("kept items follow any sequence of corrections to where the reference places them", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 8 }), firstSteps, async (later, first) => {
      const steps = [...first, ...later];
      run++;
      const dayMs = Date.UTC(2024, 0, 1) + run * 3 * 24 * HOUR;
      const venueIds = PLACES.map((_, i) => run * 10 + i);
      const venues: IndexVenue[] = PLACES.map((place, i) => ({
        id: venueIds[i] ?? 0,
        ...place,
        radiusM: null,
      }));
      await corrections.importLines(
        venues.map((v) => venue(v.id, "Etc/UTC", { latitude: v.latitude, longitude: v.longitude })),
      );
      const catalog = new Map<number, IndexEvent>();
      const user = await createUser(server, key, `run${run}@example.com`);
      let photoNumber = 0;
      for (const current of steps) {
        if (current.kind === "import") {
          const lines = current.events.map(({ slot, state }) => {
            const id = run * 100 + slot;
            const startsAtMs = dayMs + state.startHour * HOUR;
            const endsAtMs = state.hours === null ? null : startsAtMs + state.hours * HOUR;
            catalog.set(id, {
              id,
              venueId: venueIds[state.venue] ?? 0,
              startsAtMs,
              endsAtMs,
              licensed: true,
            });
            return event(id, venueIds[state.venue] ?? 0, localText(startsAtMs), {
              ends_at_local: endsAtMs === null ? null : localText(endsAtMs),
            });
          });
          await corrections.importLines(lines);
          await server.reloadCatalog();
          await corrections.drain();
        } else {
          const photos = current.photos.map(({ place, hour, north }) => ({
            id: `p${photoNumber++}`,
            taken_at: new Date(dayMs + Math.round(hour * HOUR)).toISOString(),
            latitude: (PLACES[place]?.latitude ?? 0) + north / 111_000,
            longitude: PLACES[place]?.longitude ?? 0,
          }));
          const sent = await sendMedia(server, key, user, photos);
          expect(sent.status).toBe(200);
        }
      }
      await corrections.drain();
      const reference = new ReferenceMatcher(venues, [...catalog.values()], SETTINGS);
      const kept = await server.store.rows<{
        media_id: string;
        event_id: number;
        taken_at: Date;
        latitude: number;
        longitude: number;
      }>(
        sql`select media_id, event_id, taken_at, latitude, longitude from media where user_id = ${user}::uuid`,
      );
      const placed = await reference.match(
        kept.map((item) => ({
          latitude: item.latitude,
          longitude: item.longitude,
          takenAtMs: new Date(item.taken_at).getTime(),
        })),
      );
      expect(kept.map((item, i) => [item.media_id, placed[i]?.eventId ?? null])).toEqual(
        kept.map((item) => [item.media_id, item.event_id]),
      );
      const counts = await server.store.rows<{ event_id: number; media_count: number; kept: number }>(sql`
        select ue.event_id, ue.media_count,
          (select count(*)::int from media m where m.user_id = ue.user_id and m.event_id = ue.event_id) as kept
        from user_events ue where ue.user_id = ${user}::uuid`);
      for (const row of counts) expect(row.media_count).toBe(row.kept);
    }),
    { numRuns: 25 },
  );
  // Each run imports and indexes a catalog several times (one to two seconds a run on an idle machine):
  // the suite's default of 60 s is sized for single requests, and a busy machine triples this.
}, 300_000);
