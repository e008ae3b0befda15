import { describe, expect, test } from "bun:test";
import { CONFIDENCE, itemConfidence, itemPlace, spotCell } from "../src/confidence/confidence.ts";
import { EARTH_RADIUS_M } from "../src/shards/geo.ts";
import { type EventItem, eventConfidence, routineFlags, type VenueItem } from "./support/confidenceModel.ts";

/**
 * Match confidence by example: the worked examples the API reference gives, which spots count as
 * routine, and where a stored item falls against its event (the properties are in confidence.test.ts).
 */

const MINUTE = 60_000;
const START = Date.UTC(2025, 5, 1, 19);
const END = START + 180 * MINUTE;
/** The core's share of the 500 m radius these items are measured against: max(coreMinM, coreShare × 500). */
const CORE = Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * 500) / 500;

describe("the API reference's worked examples (radius 500 m, 120 min before, 60 after, a 3-hour show)", () => {
  const at = (metres: number, minutes: number, routine = false): EventItem => {
    const before = minutes < 0;
    const after = minutes > 180;
    return {
      distanceShare: metres / 500,
      timeShare: before ? -minutes / 120 : after ? (minutes - 180) / 60 : 0,
      before,
      takenAtMs: START + minutes * MINUTE,
      inCore: metres <= CORE * 500,
      routine,
    };
  };

  const hotel = [0, 45, 90, 135, 170].map((minutes) => at(250, minutes));
  const bar = [10, 60, 110, 160].map((minutes) => at(350, minutes));
  const tailgater = [at(300, -120), at(300, -75), at(300, -30), at(25, 40), at(25, 150)];

  // Each row of the table in docs/api.md §15, in its order.
  const examples: [string, EventItem[], number][] = [
    ["one photo near the centre during the show", [at(25, 60)], 0.67],
    ["one photo at a fifth of the radius during the show", [at(100, 60)], 0.58],
    ["one photo at a quarter of the radius (outside the core) during the show", [at(125, 60)], 0.29],
    ["one photo near the centre, 20 minutes before the start", [at(25, -20)], 0.64],
    ["one photo at 90 % of the radius, 100 minutes before the start", [at(450, -100)], 0.1],
    ["one photo at half the radius, 30 minutes after the end", [at(250, 210)], 0.12],
    ["two photos near the centre, 10 minutes apart", [at(25, 60), at(25, 70)], 0.9],
    [
      "three photos near the centre at 10, 90 and 170 minutes in",
      [at(25, 10), at(25, 90), at(25, 170)],
      0.99,
    ],
    ["one photo 300 m out during the show", [at(300, 60)], 0.16],
    ["the same photo from a routine spot", [at(300, 60, true)], 0.03],
    ["a routine spot's photo whose fix strayed into the core (90 m out)", [at(90, 60, true)], 0.06],
    ["a hotel guest: five photos from a room 250 m out through the show", hotel, 0.19],
    ["a bar regular: four photos from a bar 350 m out through the game", bar, 0.19],
    ["the same bar on a routine night", bar.map((item) => ({ ...item, routine: true })), 0.03],
    ["a tailgater: three photos in a lot 300 m out before the start, two in the stands", tailgater, 0.98],
    ["the tailgater's lot alone", tailgater.slice(0, 3), 0.17],
  ];

  test.each(examples)("%s", (_, items, expected) => {
    expect(eventConfidence(items, START, END)).toBe(expected);
    if (items.length === 1 && !(items[0] as EventItem).routine)
      expect(itemConfidence(items[0] as EventItem, (items[0] as EventItem).inCore)).toBe(expected);
  });

  test("two photos an hour apart, 70 m from a small theatre's point (radius 200 m): in its core, 0.78", () => {
    const theatre = (minutes: number): EventItem => ({
      ...at(0, minutes),
      distanceShare: 70 / 200,
      inCore: 70 <= Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * 200),
    });
    const seat = [theatre(30), theatre(90)];
    expect(seat.every((item) => item.inCore)).toBe(true);
    expect(eventConfidence(seat, START, END)).toBe(0.78);
  });

  test("one photo near the centre on the day of a show whose time is unknown: 0.54", () => {
    const item = at(25, 60);
    const day = { start: START - 19 * 60 * MINUTE, end: START + 5 * 60 * MINUTE };
    expect(eventConfidence([item], day.start, day.end, undefined, true)).toBe(0.54);
    expect(itemConfidence(item, true, true)).toBe(0.54);
    expect(itemConfidence(item, true, true)).toBeLessThan(itemConfidence(item, true));
  });

  test("a festival-ground neighbour (radius 1000 m, an 11-hour day): home and street photos stay at 0.19", () => {
    const day = 660;
    const near = (metres: number, minutes: number): EventItem => ({
      distanceShare: metres / 1000,
      timeShare: 0,
      before: false,
      takenAtMs: START + minutes * MINUTE,
      inCore: metres <= 200,
      routine: false,
    });
    const home = [30, 150, 270, 390, 510, 640].map((minutes) => near(600, minutes));
    const street = [near(850, 200), near(900, 420)];
    expect(eventConfidence([...home, ...street], START, START + day * MINUTE)).toBe(0.19);
  });

  test("three photos from a home 300 m away within twenty minutes: 0.19, or 0.03 when that spot is a routine", () => {
    const home = [at(300, 60), at(300, 70), at(300, 80)];
    expect(eventConfidence(home, START, END)).toBe(0.19);
    expect(
      eventConfidence(
        home.map((item) => ({ ...item, routine: true })),
        START,
        END,
      ),
    ).toBe(0.03);
  });
});

describe("routine spots", () => {
  const venue = { latitude: 51.5, longitude: -0.1, radiusM: 1000 };
  const metresPerDegree = (EARTH_RADIUS_M * Math.PI) / 180;
  const place = (north: number, east: number, eventId: number, at = venue): VenueItem => ({
    eventId,
    latitude: at.latitude + north / metresPerDegree,
    longitude: at.longitude + east / (metresPerDegree * Math.cos((at.latitude * Math.PI) / 180)),
  });
  const events = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

  test("one spot outside the core on routineEvents different events is a routine; one event fewer is not", () => {
    const spot = (eventId: number, jitter: number) => place(400 + jitter, 300 - jitter, eventId);
    const enough = events(CONFIDENCE.routineEvents).map((id) => spot(id, (id % 3) * 10));
    expect(routineFlags(enough, venue)).toEqual(enough.map(() => true));
    const fewer = enough.slice(1);
    expect(routineFlags(fewer, venue)).toEqual(fewer.map(() => false));
  });

  test("many items of one event from one spot are not a routine", () => {
    const items = events(20).map((i) => place(400, 300 + i, 7));
    expect(routineFlags(items, venue).some(Boolean)).toBe(false);
  });

  test("a seat in the core (max(coreMinM, coreShare x radius)) used game after game is not a routine", () => {
    const core = Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * venue.radiusM);
    const seat = events(40).map((id) => place(core * 0.6, core * 0.6, id));
    expect(routineFlags(seat, venue).some(Boolean)).toBe(false);
    const outside = events(40).map((id) => place(core * 0.8, core * 0.8, id));
    expect(routineFlags(outside, venue).every(Boolean)).toBe(true);
  });

  test("a spot is a cell and the eight around it: neighbours add up across a cell edge, cells two apart do not", () => {
    const edge = CONFIDENCE.spotM * 6;
    const straddling = events(CONFIDENCE.routineEvents).map((id) =>
      place(400, edge + (id % 2 === 0 ? -1 : 1), id),
    );
    expect(routineFlags(straddling, venue).every(Boolean)).toBe(true);
    const apart = events(CONFIDENCE.routineEvents).map((id) =>
      place(400, id * (2 * CONFIDENCE.spotM + 5), id),
    );
    expect(routineFlags(apart, venue).some(Boolean)).toBe(false);
  });

  test("the core reaches 75 m however small the radius: a seat's fix 70 m from a small theatre is in it", () => {
    const theatre = { ...venue, radiusM: 200 };
    expect(spotCell(place(70, 0, 1, theatre), theatre).inCore).toBe(true);
    expect(spotCell(place(0, 80, 1, theatre), theatre).inCore).toBe(false);
  });

  test("spotCell: the cell on a grid anchored at the venue, and whether the item lies in the core", () => {
    const core = Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * venue.radiusM);
    expect(spotCell(place(core - 1, 0, 1), venue)).toEqual({
      row: Math.floor((core - 1) / CONFIDENCE.spotM),
      column: 0,
      inCore: true,
    });
    expect(spotCell(place(0, -(core + 1), 1), venue)).toEqual({
      row: 0,
      column: Math.floor(-(core + 1) / CONFIDENCE.spotM),
      inCore: false,
    });
  });

  test("a spot whose items lie mostly outside the core is a routine, its items in the core too", () => {
    const core = Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * venue.radiusM);
    // A home 20 m past the core's edge whose fixes stray 40 m either way: some land in the core.
    const home = events(8).flatMap((id) => [
      place(core + 20, 0, id),
      place(core + 60, 0, id),
      place(core - 20, 0, id),
    ]);
    expect(routineFlags(home, venue).every(Boolean)).toBe(true);
    // A seat 20 m inside the edge: its strays outside are the seat's, not a home's.
    const seat = events(8).flatMap((id) => [
      place(core - 20, 0, id),
      place(core - 60, 0, id),
      place(core + 20, 0, id),
    ]);
    expect(routineFlags(seat, venue).some(Boolean)).toBe(false);
  });

  test("across the antimeridian a spot is still one spot", () => {
    const dateLine = { latitude: -16.5, longitude: 179.9995, radiusM: 1000 };
    const items = events(CONFIDENCE.routineEvents).map((id) => {
      const item = place(300, 200 + id, id, dateLine);
      return { ...item, longitude: item.longitude > 180 ? item.longitude - 360 : item.longitude };
    });
    expect(items.every((item) => item.longitude < 0)).toBe(true);
    expect(routineFlags(items, dateLine).every(Boolean)).toBe(true);
  });
});

describe("itemPlace: the parts of the best-candidate score, from stored facts", () => {
  const settings = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };
  const venue = { latitude: 10, longitude: 10, radiusM: null };
  const north = (metres: number) => 10 + (metres / EARTH_RADIUS_M) * (180 / Math.PI);

  test("distance over the radius that applies, time distance over the padding on its side", () => {
    const event = { startsAtMs: START, endsAtMs: null };
    expect(
      itemPlace(
        { latitude: north(250), longitude: 10, takenAtMs: START - 30 * MINUTE },
        venue,
        event,
        settings,
      ),
    ).toEqual({
      distanceShare: expect.closeTo(0.5, 9),
      timeShare: 0.25,
      before: true,
    });
    // No end in the catalog: the default 300 minutes, then 15 of the 60 minutes after.
    expect(
      itemPlace({ latitude: 10, longitude: 10, takenAtMs: START + 315 * MINUTE }, venue, event, settings),
    ).toEqual({
      distanceShare: 0,
      timeShare: 0.25,
      before: false,
    });
    const ends = { startsAtMs: START, endsAtMs: END };
    expect(
      itemPlace(
        { latitude: north(50), longitude: 10, takenAtMs: START + 60 * MINUTE },
        { ...venue, radiusM: 100 },
        ends,
        settings,
      ),
    ).toEqual({ distanceShare: expect.closeTo(0.5, 9), timeShare: 0, before: false });
  });
});
