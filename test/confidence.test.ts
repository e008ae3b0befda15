import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CONFIDENCE, type ItemPlace, itemConfidence, itemWeight } from "../src/confidence/confidence.ts";
import { type EventItem, eventConfidence, rawEventConfidence } from "./support/confidenceModel.ts";

/**
 * Match confidence: bounds, two decimals, monotonic in each input (closer, inside rather than in the
 * padding, more items, wider span never lower; routine never higher) and saturating outside the
 * venue's core. The worked examples and routine spots are in confidence-examples.test.ts.
 */

const MINUTE = 60_000;
const START = Date.UTC(2025, 5, 1, 19);
const END = START + 180 * MINUTE;

const share = fc.double({ min: 0, max: 1, noNaN: true });
/** The core's share of the 500 m radius these items are measured against: max(coreMinM, coreShare × 500). */
const CORE = Math.max(CONFIDENCE.coreMinM, CONFIDENCE.coreShare * 500) / 500;
/** An item at `distanceShare` as a store sees it: in the core or not; routine wherever its spot makes it so. */
const placedAt = (item: EventItem, distanceShare: number): EventItem => ({
  ...item,
  distanceShare,
  inCore: distanceShare <= CORE,
});
const placeArbitrary: fc.Arbitrary<ItemPlace> = fc
  .record({ distanceShare: share, timeShare: share, side: fc.constantFrom("before", "inside", "after") })
  .map(({ distanceShare, timeShare, side }) => ({
    distanceShare,
    timeShare: side === "inside" ? 0 : timeShare,
    before: side === "before",
  }));
const itemArbitrary: fc.Arbitrary<EventItem> = fc
  .record({
    place: placeArbitrary,
    minutes: fc.integer({ min: -120, max: 240 }),
    routine: fc.boolean(),
  })
  .map(({ place, minutes, routine }) =>
    placedAt({ ...place, takenAtMs: START + minutes * MINUTE, inCore: false, routine }, place.distanceShare),
  );
const itemsArbitrary = fc.array(itemArbitrary, { minLength: 1, maxLength: 12 });

const confidenceOf = (items: readonly EventItem[]) => rawEventConfidence(items, START, END);
const itemConfidenceOf = (item: EventItem) => itemConfidence(item, item.inCore);

describe("bounds and rounding", () => {
  test("weights are in (0, 1]; confidences in [0, 1] with at most two decimals", () => {
    fc.assert(
      fc.property(itemsArbitrary, placeArbitrary, (items, place) => {
        const weight = itemWeight(place);
        expect(weight).toBeGreaterThan(0);
        expect(weight).toBeLessThanOrEqual(1);
        const alone = [itemConfidence(place, true), itemConfidence(place, false)];
        for (const value of [eventConfidence(items, START, END), ...alone]) {
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThanOrEqual(1);
          expect(Math.round(value * 100) / 100).toBe(value);
        }
      }),
    );
  });

  test("closeness is 1 within a tenth of the radius and 0.35 from four tenths to the edge", () => {
    fc.assert(
      fc.property(share, (distanceShare) => {
        const weight = itemWeight({ distanceShare, timeShare: 0, before: false });
        if (distanceShare <= 0.1) expect(weight).toBe(1);
        if (distanceShare >= 0.4) expect(weight).toBeCloseTo(0.35, 12);
      }),
    );
  });

  test("an event without items, or a zero-length event, is still a number", () => {
    expect(eventConfidence([], START, END)).toBe(0);
    expect(
      eventConfidence(
        [{ distanceShare: 0, timeShare: 0, before: false, takenAtMs: START, inCore: true, routine: false }],
        START,
        START,
      ),
    ).toBe(0.67);
  });
});

describe("monotonic in each input", () => {
  test("closer never lower", () => {
    fc.assert(
      fc.property(itemsArbitrary, fc.nat(), share, (items, which, closer) => {
        const i = which % items.length;
        const item = items[i] as EventItem;
        const near = items.with(i, placedAt(item, Math.min(item.distanceShare, closer)));
        expect(confidenceOf(near)).toBeGreaterThanOrEqual(confidenceOf(items));
        expect(itemConfidenceOf(near[i] as EventItem)).toBeGreaterThanOrEqual(itemConfidenceOf(item));
      }),
    );
  });

  test("inside rather than in the padding, and nearer the window's inside, never lower", () => {
    fc.assert(
      fc.property(itemsArbitrary, fc.nat(), share, fc.boolean(), (items, which, nearer, inside) => {
        const i = which % items.length;
        const item = items[i] as EventItem;
        const timed = items.with(i, { ...item, timeShare: inside ? 0 : Math.min(item.timeShare, nearer) });
        expect(confidenceOf(timed)).toBeGreaterThanOrEqual(confidenceOf(items));
        expect(itemConfidenceOf(timed[i] as EventItem)).toBeGreaterThanOrEqual(itemConfidenceOf(item));
      }),
    );
  });

  test("more items never lower, whatever the added item", () => {
    fc.assert(
      fc.property(itemsArbitrary, itemArbitrary, (items, extra) => {
        expect(confidenceOf([...items, extra])).toBeGreaterThanOrEqual(confidenceOf(items));
        expect(eventConfidence([...items, extra], START, END)).toBeGreaterThanOrEqual(
          eventConfidence(items, START, END),
        );
      }),
    );
  });

  test("wider span never lower", () => {
    fc.assert(
      fc.property(itemsArbitrary, fc.integer({ min: 0, max: 400 }), (items, minutes) => {
        // The earliest item moved earlier, or the latest later: the span can only widen.
        const order = items
          .map((item, i) => ({ item, i }))
          .sort((a, b) => a.item.takenAtMs - b.item.takenAtMs);
        const first = order[0] as { item: EventItem; i: number };
        const last = order[order.length - 1] as { item: EventItem; i: number };
        const earlier = items.with(first.i, {
          ...first.item,
          takenAtMs: first.item.takenAtMs - minutes * MINUTE,
        });
        const later = items.with(last.i, { ...last.item, takenAtMs: last.item.takenAtMs + minutes * MINUTE });
        expect(confidenceOf(earlier)).toBeGreaterThanOrEqual(confidenceOf(items));
        expect(confidenceOf(later)).toBeGreaterThanOrEqual(confidenceOf(items));
      }),
    );
  });

  test("routine never higher", () => {
    fc.assert(
      fc.property(itemsArbitrary, fc.nat(), (items, which) => {
        const i = which % items.length;
        const flagged = items.with(i, { ...(items[i] as EventItem), routine: true });
        expect(confidenceOf(flagged)).toBeLessThanOrEqual(confidenceOf(items));
      }),
    );
  });
});

describe("bystanders: evidence from outside the core saturates", () => {
  const outsideItems = itemsArbitrary.map((items) =>
    items.map((item) => placedAt(item, CORE + (1 - CORE) * Math.max(item.distanceShare, 0.01))),
  );
  /** The highest confidence these items may give: from outsideCap times the best weight counted outside. */
  const ceilingOf = (items: readonly EventItem[]) => {
    const best = Math.max(
      ...items.map((item) => itemWeight(item) * (item.routine ? CONFIDENCE.routineWeight : 1)),
    );
    return 1 - Math.exp(-CONFIDENCE.outsideCap * best);
  };

  test("no number of items outside the core, and no span of them, lifts an event past outsideCap × their best weight", () => {
    fc.assert(
      fc.property(outsideItems, fc.integer({ min: 1, max: 30 }), (items, copies) => {
        const many = Array.from({ length: copies }, () => items).flat();
        expect(confidenceOf(many)).toBeLessThanOrEqual(ceilingOf(items));
      }),
    );
  });

  test("routine items saturate too, those whose fixes fell in the core as well", () => {
    fc.assert(
      fc.property(itemsArbitrary, fc.integer({ min: 1, max: 30 }), (items, copies) => {
        const routine = items.map((item) => ({ ...item, routine: true }));
        const many = Array.from({ length: copies }, () => routine).flat();
        expect(confidenceOf(many)).toBeLessThanOrEqual(ceilingOf(routine));
      }),
    );
  });

  test("how close the user got outside the core outweighs how many photos they took farther out", () => {
    // One photo during the show just past the core's edge, against any number from past floorShare.
    const nearEdge: EventItem = placedAt(
      {
        distanceShare: 0,
        timeShare: 0,
        before: false,
        takenAtMs: START + 60 * MINUTE,
        inCore: false,
        routine: false,
      },
      CORE + 0.01,
    );
    const far = itemsArbitrary.map((items) =>
      items.map((item) =>
        placedAt({ ...item, routine: false }, Math.max(CONFIDENCE.floorShare, item.distanceShare)),
      ),
    );
    fc.assert(
      fc.property(far, fc.integer({ min: 1, max: 30 }), (items, copies) => {
        const many = Array.from({ length: copies }, () => items).flat();
        expect(confidenceOf(many)).toBeLessThan(confidenceOf([nearEdge]));
      }),
    );
  });

  test("the same items in the core give more, and so does any one of them moved in", () => {
    fc.assert(
      fc.property(outsideItems, fc.nat(), (items, which) => {
        const inCore = items.map((item) => ({ ...item, inCore: true, routine: false }));
        expect(confidenceOf(inCore)).toBeGreaterThan(confidenceOf(items));
        const i = which % items.length;
        const one = items.with(i, { ...(items[i] as EventItem), inCore: true, routine: false });
        expect(confidenceOf(one)).toBeGreaterThanOrEqual(confidenceOf(items));
      }),
    );
  });

  test("more items outside the core stop raising it rather than lower it", () => {
    fc.assert(
      fc.property(outsideItems, (items) => {
        let previous = 0;
        for (let copies = 1; copies <= 8; copies++) {
          const value = confidenceOf(Array.from({ length: copies }, () => items).flat());
          expect(value).toBeGreaterThanOrEqual(previous);
          previous = value;
        }
      }),
    );
  });
});
