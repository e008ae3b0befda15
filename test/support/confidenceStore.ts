import { expect } from "bun:test";
import { sql } from "drizzle-orm";
import { itemPlace, itemWeight, spotCell } from "../../src/confidence/confidence.ts";
import { EARTH_RADIUS_M } from "../../src/shards/geo.ts";
import type { Store } from "../../src/store/db.ts";
import type { KeptMedia } from "../../src/store/ingest.ts";
import { kept } from "./batchWrites.ts";
import { type EventItem, eventConfidence, routineFlags } from "./confidenceModel.ts";

/**
 * The fixture of the stored confidence tests: two venues and their nights, items kept there as the API
 * keeps them, and what the model (test/support/confidenceModel.ts) gives for a user's history rows from
 * the user's media rows as stored.
 */

export const SETTINGS = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };
export const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export type Venue = { id: number; latitude: number; longitude: number; radiusM: number };
export type Event = {
  id: number;
  venue: Venue;
  startsAtMs: number;
  endsAtMs: number | null;
  timeUnknown: boolean;
};

/** The first venue's core is 100 m (a fifth of its radius), the second's 75 m (coreMinM). */
export const VENUES: Venue[] = [
  { id: 900, latitude: 51.5, longitude: -0.12, radiusM: 500 },
  { id: 901, latitude: 51.51, longitude: -0.1, radiusM: 300 },
];
const FIRST_START = Date.UTC(2025, 5, 1, 19);
/** Six nights at the first venue (some without an end, one of unknown time), two at the second (one). */
export const EVENTS: Event[] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) =>
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
export const eventById = new Map(EVENTS.map((e) => [e.id, e]));

export async function addCatalog(store: Store): Promise<void> {
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

const METRES_PER_DEGREE = (EARTH_RADIUS_M * Math.PI) / 180;

/** The point `north` and `east` metres from a venue's centre. */
export function metresFrom(
  venue: Venue,
  north: number,
  east: number,
): { latitude: number; longitude: number } {
  return {
    latitude: venue.latitude + north / METRES_PER_DEGREE,
    longitude: venue.longitude + east / (METRES_PER_DEGREE * Math.cos((venue.latitude * Math.PI) / 180)),
  };
}

/** An item as the API would keep it at an event: the matcher's place worked out again, its weight and cell. */
export function keptAt(
  mediaId: string,
  eventId: number,
  where: { latitude: number; longitude: number },
  takenAtMs: number,
): KeptMedia {
  const event = eventById.get(eventId) as Event;
  const place = itemPlace({ ...where, takenAtMs }, event.venue, event, SETTINGS);
  const { row, column, inCore } = spotCell(where, event.venue);
  return {
    ...kept(mediaId, event.id),
    venueId: event.venue.id,
    takenAt: new Date(takenAtMs).toISOString(),
    ...where,
    spot: { row, column },
    inCore,
    weight: itemWeight(place),
  };
}

/** What the model makes of a user's media rows as stored: each event's confidence, and the routine items. */
export type Expected = { confidences: Map<number, number>; routine: number; routineInCore: number };

async function expectedOf(store: Store, userId: string): Promise<Expected> {
  const rows = await store.rows<{ event_id: number; latitude: number; longitude: number; taken_ms: number }>(
    sql`select event_id, latitude, longitude, (extract(epoch from taken_at) * 1000)::float8 as taken_ms
        from media where user_id = ${userId}::uuid`,
  );
  const expected: Expected = { confidences: new Map(), routine: 0, routineInCore: 0 };
  for (const venue of VENUES) {
    const here = rows.filter((r) => (eventById.get(r.event_id) as Event).venue.id === venue.id);
    const flags = routineFlags(
      here.map((r) => ({ eventId: r.event_id, latitude: r.latitude, longitude: r.longitude })),
      venue,
    );
    const byEvent = new Map<number, EventItem[]>();
    here.forEach((r, i) => {
      const event = eventById.get(r.event_id) as Event;
      const item = { latitude: r.latitude, longitude: r.longitude, takenAtMs: r.taken_ms };
      const { inCore } = spotCell(item, venue);
      const routine = flags[i] === true;
      if (routine) expected.routine++;
      if (routine && inCore) expected.routineInCore++;
      const list = byEvent.get(r.event_id) ?? [];
      list.push({ ...itemPlace(item, venue, event, SETTINGS), takenAtMs: r.taken_ms, inCore, routine });
      byEvent.set(r.event_id, list);
    });
    for (const [eventId, items] of byEvent) {
      const event = eventById.get(eventId) as Event;
      const end = event.endsAtMs ?? event.startsAtMs + SETTINGS.defaultDurationMinutes * 60_000;
      const confidence = eventConfidence(items, event.startsAtMs, end, undefined, event.timeUnknown);
      expected.confidences.set(eventId, Math.round(confidence * 100));
    }
  }
  return expected;
}

/**
 * Each history row's confidence as stored, with what it must be; the user's spot rows as stored, with
 * the counts of the user's media rows they must hold.
 */
export async function storedAndExpected(store: Store, userId: string) {
  const expected = await expectedOf(store, userId);
  const stored = await store.rows<{ event_id: number; confidence: number | null }>(
    sql`select event_id, confidence from user_events where user_id = ${userId}::uuid order by event_id`,
  );
  const spots = await store.rows<Record<string, number>>(
    sql`select venue_id, spot_row, spot_col, event_id, items, core_items from user_venue_spots
        where user_id = ${userId}::uuid and items > 0 order by 1, 2, 3, 4`,
  );
  const counted = await store.rows<Record<string, number>>(
    sql`select venue_id, spot_row, spot_col, event_id, count(*)::int as items,
               count(*) filter (where in_core)::int as core_items
        from media where user_id = ${userId}::uuid and spot_row is not null
        group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
  );
  return {
    stored: stored.map((row) => [row.event_id, row.confidence]),
    expected: stored.map((row) => [row.event_id, expected.confidences.get(row.event_id) ?? 0]),
    spots,
    counted,
    routine: expected.routine,
    routineInCore: expected.routineInCore,
  };
}

/** Checks that the history rows hold the model's confidences and the spot rows the media rows' counts. */
export async function expectModelHeld(store: Store, userId: string) {
  const state = await storedAndExpected(store, userId);
  expect(state.stored).toEqual(state.expected);
  expect(state.spots).toEqual(state.counted);
  return state;
}
