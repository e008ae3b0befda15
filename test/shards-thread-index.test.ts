/** A request thread's view of the shared index: one switch for every thread, no batch across a swap. */
import { describe, expect, test } from "bun:test";
import { buildIndex } from "../src/shards/build.ts";
import { columnsFromArrays } from "../src/shards/columns.ts";
import type { IndexEvent, MatchSettings } from "../src/shards/matcher.ts";
import { CURRENT_GENERATION, type SharedGeneration, ThreadIndex } from "../src/shards/threadIndex.ts";

const settings: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const venue = { id: 1, latitude: 40.75, longitude: -73.99, radiusM: null };
const startsAtMs = Date.parse("2025-07-05T00:00:00Z");
const at = { latitude: 40.75, longitude: -73.99, takenAtMs: startsAtMs + 3_600_000 };

/** A generation whose one event at the venue has id `eventId`. */
function generation(number: number, eventId: number): SharedGeneration {
  const events: IndexEvent[] = [{ id: eventId, venueId: 1, startsAtMs, endsAtMs: null, licensed: true }];
  const index = buildIndex(columnsFromArrays([venue], events), { settings, shards: 4, generation: number });
  return { number, version: String(number), events: events.length, index };
}

function threadOver(control: Int32Array) {
  return new ThreadIndex(control, settings, 4);
}

describe("ThreadIndex", () => {
  test("every thread switches at the one store; a thread not yet holding the new one serves the newest it holds", async () => {
    const control = new Int32Array(new SharedArrayBuffer(12));
    Atomics.store(control, CURRENT_GENERATION, 1);
    const [first, second] = [threadOver(control), threadOver(control)];
    for (const thread of [first, second]) thread.hold(generation(1, 100));
    first.hold(generation(2, 200));
    expect((await first.match([at]))[0]?.eventId).toBe(100);
    Atomics.store(control, CURRENT_GENERATION, 2);
    expect((await first.match([at]))[0]?.eventId).toBe(200);
    expect((await second.match([at]))[0]?.eventId).toBe(100);
    second.hold(generation(2, 200));
    expect((await second.match([at]))[0]?.eventId).toBe(200);
  });

  test("older generations are let go once current moved on and no batch uses them", async () => {
    const control = new Int32Array(new SharedArrayBuffer(12));
    Atomics.store(control, CURRENT_GENERATION, 1);
    const thread = threadOver(control);
    thread.hold(generation(1, 100));
    thread.hold(generation(2, 200));
    expect(thread.held()).toBe(2);
    Atomics.store(control, CURRENT_GENERATION, 2);
    await thread.match([at]);
    expect(thread.held()).toBe(1);
    await thread.close();
  });
});
