import {
  CONFIDENCE,
  type ConfidenceParameters,
  type ItemPlace,
  itemWeight,
  spotCell,
} from "../../src/confidence/confidence.ts";

/**
 * An independent model of a user's event confidence (docs/api.md §15), written from the formula in
 * plain loops: the tests hold the store's one definition (src/store/confidenceSql.ts) to it, and the
 * quality benchmark ranks with it (free to vary the parameters) where a database would slow it down.
 */

/** A kept item at an event: its place, its time, whether it lies in the venue's core, whether it is routine. */
export type EventItem = ItemPlace & { takenAtMs: number; inCore: boolean; routine: boolean };

/** Evidence that grows with `x` but never reaches `cap`: `cap × (1 − e^(−x / cap))`, 0 under no cap. */
const saturated = (x: number, cap: number) => (cap > 0 ? cap * (1 - Math.exp(-x / cap)) : 0);

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const twoDecimals = (x: number) => Math.round(x * 100) / 100;

/** Unrounded: what ranking compares; the API reports eventConfidence() of the same items. */
export function rawEventConfidence(
  items: readonly EventItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
  timeUnknown = false,
): number {
  let inside = 0;
  let outside = 0;
  let bestOutside = 0;
  let anyInside = false;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const item of items) {
    const weight = itemWeight(item, p);
    // A routine item counts as outside the core wherever its fix fell.
    if (item.inCore && !item.routine) {
      inside += weight;
      anyInside = true;
    } else {
      const counted = weight * (item.routine ? p.routineWeight : 1);
      outside += counted;
      bestOutside = Math.max(bestOutside, counted);
    }
    if (item.routine) continue;
    first = Math.min(first, item.takenAtMs);
    last = Math.max(last, item.takenAtMs);
  }
  const duration = endMs - startMs;
  const span = p.spanEvidence * (last > first && duration > 0 ? clamp01((last - first) / duration) : 0);
  // Outside the core, items and (with none inside) the span saturate below a ceiling set by the best of
  // those items: a bystander's evidence.
  const evidence =
    p.itemEvidence * inside +
    saturated(p.itemEvidence * outside + (anyInside ? 0 : span), p.outsideCap * bestOutside) +
    (anyInside ? span : 0);
  // An event whose time is unknown spans the venue's whole day: its evidence counts at a share.
  return 1 - Math.exp(-evidence * (timeUnknown ? p.timeUnknownShare : 1));
}

/** A user's attendance at an event, from all of the user's kept items there. */
export function eventConfidence(
  items: readonly EventItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
  timeUnknown = false,
): number {
  return twoDecimals(rawEventConfidence(items, startMs, endMs, p, timeUnknown));
}

/** A user's kept item at a venue, for finding routine spots. */
export type VenueItem = { eventId: number; latitude: number; longitude: number };

/**
 * Which of a user's kept items at one venue are routine: those whose cell and the eight around it hold
 * kept items of at least routineEvents different events, most of those items outside the core.
 */
export function routineFlags(
  items: readonly VenueItem[],
  venue: { latitude: number; longitude: number; radiusM: number },
  p: ConfidenceParameters = CONFIDENCE,
): boolean[] {
  const cells = items.map((item) => spotCell(item, venue, p));
  // Cells lie within radius / spotM of the venue (10,000 at a 10 km radius and 1 m cells): keys never collide.
  const key = (row: number, column: number) => row * 100_000 + column;
  type Tally = { events: Set<number>; items: number; inCore: number };
  const byCell = new Map<number, Tally>();
  cells.forEach((cell, i) => {
    const at = key(cell.row, cell.column);
    const tally = byCell.get(at) ?? { events: new Set<number>(), items: 0, inCore: 0 };
    tally.events.add((items[i] as VenueItem).eventId);
    tally.items++;
    if (cell.inCore) tally.inCore++;
    byCell.set(at, tally);
  });
  const routineAround = (row: number, column: number): boolean => {
    const events = new Set<number>();
    let all = 0;
    let inCore = 0;
    for (let dr = -1; dr <= 1; dr++) {
      for (let dc = -1; dc <= 1; dc++) {
        const tally = byCell.get(key(row + dr, column + dc));
        if (tally === undefined) continue;
        for (const id of tally.events) events.add(id);
        all += tally.items;
        inCore += tally.inCore;
      }
    }
    return events.size >= p.routineEvents && 2 * inCore < all;
  };
  // Items of one cell share the answer.
  const answers = new Map<number, boolean>();
  return cells.map((cell) => {
    const at = key(cell.row, cell.column);
    let answer = answers.get(at);
    if (answer === undefined) {
      answer = routineAround(cell.row, cell.column);
      answers.set(at, answer);
    }
    return answer;
  });
}
