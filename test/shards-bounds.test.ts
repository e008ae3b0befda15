import { describe, expect, test } from "bun:test";
import { buildIndex } from "../src/shards/build.ts";
import { columnsFromArrays } from "../src/shards/columns.ts";
import type { MatchSettings } from "../src/shards/matcher.ts";
import { IndexReader } from "../src/shards/search.ts";

/**
 * A read outside one of the index's arrays must throw, never answer: falling back to row 0 would turn
 * a corrupt index into plausible wrong matches. Each case breaks one link of a sound index.
 */

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const PARIS = { latitude: 48.8566, longitude: 2.3522 };
const SHOW_MS = Date.UTC(2025, 5, 1, 20);

function soundReader(): IndexReader {
  const columns = columnsFromArrays(
    [{ id: 7, ...PARIS, radiusM: null }],
    [{ id: 70, venueId: 7, startsAtMs: SHOW_MS, endsAtMs: null, licensed: true }],
  );
  return new IndexReader(buildIndex(columns, { settings: SETTINGS, shards: 4, generation: 1 }));
}

/** (event row, venue row) for one capture at the venue, an hour into the show. */
function matchAtVenue(reader: IndexReader, count = 1): number[] {
  const out = new Int32Array(2);
  reader.matchPacked(Float64Array.of(PARIS.latitude, PARIS.longitude, SHOW_MS + 3_600_000), count, out);
  return [...out];
}

describe("reads outside the index's arrays throw, naming the array", () => {
  test("a sound index answers the capture", () => {
    expect(matchAtVenue(soundReader())).toEqual([0, 0]);
  });

  test("a cell listing a venue row past the venues", () => {
    const reader = soundReader();
    reader.arrays.cellVenues.fill(5);
    expect(() => matchAtVenue(reader)).toThrow(/^venueRecord\[40\] is outside the array \(length 8\)$/);
  });

  test("a venue whose event run reaches past the events", () => {
    const reader = soundReader();
    reader.arrays.venueEvents[1] = 3;
    expect(() => matchAtVenue(reader)).toThrow(/^eventWindow\[2\] is outside the array/);
  });

  test("a fine cell pointing at a hash slot past the table", () => {
    const reader = soundReader();
    reader.arrays.fineSlot.fill(1_000_000);
    expect(() => matchAtVenue(reader)).toThrow(/^slotVenues\[2000000\] is outside the array/);
  });

  test("a count of captures beyond the packed captures", () => {
    expect(() => matchAtVenue(soundReader(), 2)).toThrow(RangeError);
  });

  test("an empty catalog builds and answers nothing", () => {
    const empty = columnsFromArrays([], []);
    const reader = new IndexReader(buildIndex(empty, { settings: SETTINGS, shards: 4, generation: 1 }));
    expect(matchAtVenue(reader)).toEqual([-1, -1]);
  });
});
