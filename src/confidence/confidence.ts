import { EARTH_RADIUS_M, haversineMeters } from "../shards/geo.ts";

/**
 * Match confidence: how sure the service is that a kept item, or a user's kept items at an event,
 * mean the user was there. It never changes what matches (docs/api.md §5); it ranks.
 *
 * An item's weight is its closeness times its timing, each 1 at best:
 *
 *   closeness = 1 up to closeShare of the radius, then falling linearly to 1 − farLoss at floorShare,
 *               and 1 − farLoss from there to the edge
 *   timing    = 1 inside [start, end]; before the start 1 − beforeLoss × share, after the end
 *               1 − afterLoss × share, where share = time distance / padding (0 to 1)
 *
 * An event's evidence adds the weights of the user's kept items there (a routine item counts
 * routineWeight of its weight) and the share of the event's duration that its non-routine items span:
 *
 *   evidence   = itemEvidence × Σ weight + spanEvidence × span
 *   confidence = 1 − exp(−evidence), reported with two decimals
 *
 * Closeness falls over the first part of the radius only (closeShare to floorShare): an audience is in
 * the building, near the venue's point, and a photo past floorShare of the radius is as likely a home, a
 * street or a queue wherever it lies beyond (docs/performance.md §11).
 *
 * Every term is non-negative and grows with closeness, with being inside rather than in the padding,
 * with the number of items and with the span, so the confidence never falls when one of those grows
 * and the routine flags stay as they are. An item's own confidence is that of an event holding it alone.
 *
 * Routine: an item outside the venue's core (the larger of coreMinM and coreShare of the radius)
 * from a spot (its cell and the eight around it, on a grid of spotM squares anchored at the venue's
 * centre) where the user's kept items at that venue fall on at least routineEvents different events:
 * a home or a workplace inside the radius, photographed on many event nights. Inside the core (the
 * stands, the hall) a spot used again and again is a season ticket.
 */

export type ConfidenceParameters = {
  closeShare: number;
  floorShare: number;
  farLoss: number;
  beforeLoss: number;
  afterLoss: number;
  itemEvidence: number;
  spanEvidence: number;
  routineWeight: number;
  coreShare: number;
  coreMinM: number;
  spotM: number;
  routineEvents: number;
};

export const CONFIDENCE: ConfidenceParameters = {
  closeShare: 0.1,
  floorShare: 0.4,
  farLoss: 0.65,
  beforeLoss: 0.5,
  afterLoss: 0.6,
  itemEvidence: 1.1,
  spanEvidence: 1.5,
  routineWeight: 0.15,
  coreShare: 0.2,
  coreMinM: 50,
  spotM: 75,
  routineEvents: 4,
};

/**
 * The min_confidence the API reference suggests for a history of events the user attended: on the
 * quality benchmark it keeps nearly all real attendances while leaving out most events a user only
 * lived, worked or walked near (docs/performance.md §11).
 */
export const SUGGESTED_MIN_CONFIDENCE = 0.5;

/** Where a kept item fell against its event: the parts of its best-candidate score. */
export type ItemPlace = {
  /** Distance to the venue over its radius, 0 to 1. */
  distanceShare: number;
  /** Time distance over the padding on its side: 0 inside [start, end], up to 1. */
  timeShare: number;
  /** Before the start (else inside [start, end] or after the end). */
  before: boolean;
};

export type EventItem = ItemPlace & { takenAtMs: number; routine: boolean };

const MINUTE_MS = 60_000;

/**
 * The matching settings a place is measured with (`MatchSettings` of src/shards/matcher.ts, which
 * imports `ItemPlace` from here: named by shape so the two modules do not import each other).
 */
export type PlaceSettings = {
  radiusM: number;
  beforeMinutes: number;
  afterMinutes: number;
  defaultDurationMinutes: number;
};

/**
 * Where an item falls against the event it matched, from the stored item and the catalog's facts,
 * with the matching engine's arithmetic (docs/api.md §5): the parts of its best-candidate score.
 */
export function itemPlace(
  item: { latitude: number; longitude: number; takenAtMs: number },
  venue: { latitude: number; longitude: number; radiusM: number | null },
  event: { startsAtMs: number; endsAtMs: number | null },
  settings: PlaceSettings,
): ItemPlace {
  const radius = venue.radiusM ?? settings.radiusM;
  const distance = haversineMeters(item.latitude, item.longitude, venue.latitude, venue.longitude);
  const start = event.startsAtMs;
  const end = event.endsAtMs ?? start + settings.defaultDurationMinutes * MINUTE_MS;
  const t = item.takenAtMs;
  const timeShare =
    t < start
      ? (start - t) / (settings.beforeMinutes * MINUTE_MS)
      : t > end
        ? (t - end) / (settings.afterMinutes * MINUTE_MS)
        : 0;
  return { distanceShare: distance / radius, timeShare, before: t < start };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const twoDecimals = (x: number) => Math.round(x * 100) / 100;

export function itemWeight(item: ItemPlace, p: ConfidenceParameters = CONFIDENCE): number {
  const far = clamp01((item.distanceShare - p.closeShare) / (p.floorShare - p.closeShare));
  const timing = 1 - (item.before ? p.beforeLoss : p.afterLoss) * clamp01(item.timeShare);
  return (1 - p.farLoss * far) * timing;
}

/** Unrounded: what ranking compares; the API reports eventConfidence() of the same items. */
export function rawEventConfidence(
  items: readonly EventItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
): number {
  return rawConfidenceOfWeights(
    items.map((item) => ({ weight: itemWeight(item, p), takenAtMs: item.takenAtMs, routine: item.routine })),
    startMs,
    endMs,
    p,
  );
}

/** An item as a store keeps it: its weight already worked out (`itemWeight`) when it was matched. */
export type WeightedItem = { weight: number; takenAtMs: number; routine: boolean };

/** `rawEventConfidence` from items whose weights are known. */
function rawConfidenceOfWeights(
  items: readonly WeightedItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
): number {
  let weights = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const item of items) {
    weights += item.weight * (item.routine ? p.routineWeight : 1);
    if (item.routine) continue;
    first = Math.min(first, item.takenAtMs);
    last = Math.max(last, item.takenAtMs);
  }
  const duration = endMs - startMs;
  const span = last > first && duration > 0 ? clamp01((last - first) / duration) : 0;
  return 1 - Math.exp(-(p.itemEvidence * weights + p.spanEvidence * span));
}

/** `eventConfidence` from items whose weights are known, in hundredths as the store keeps it. */
export function hundredthsOfWeights(
  items: readonly WeightedItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
): number {
  return Math.round(rawConfidenceOfWeights(items, startMs, endMs, p) * 100);
}

/** A user's attendance at an event, from all of the user's kept items there. */
export function eventConfidence(
  items: readonly EventItem[],
  startMs: number,
  endMs: number,
  p: ConfidenceParameters = CONFIDENCE,
): number {
  return twoDecimals(rawEventConfidence(items, startMs, endMs, p));
}

/** One matched item on its own (a `matches` entry). */
export function itemConfidence(item: ItemPlace, p: ConfidenceParameters = CONFIDENCE): number {
  return eventConfidence([{ ...item, takenAtMs: 0, routine: false }], 0, 0, p);
}

/** A user's kept item at a venue, for finding routine spots. */
export type VenueItem = { eventId: number; latitude: number; longitude: number };

/**
 * An item's cell on a grid of spotM squares anchored at the venue's centre, or null inside the core.
 * Cells, not distances between items, so a store can keep one row per (cell, event) and read a spot's
 * events with one range lookup.
 */
export function spotCell(
  item: { latitude: number; longitude: number },
  venue: { latitude: number; longitude: number; radiusM: number },
  p: ConfidenceParameters = CONFIDENCE,
): { row: number; column: number } | null {
  const metresPerDegree = (EARTH_RADIUS_M * Math.PI) / 180;
  // Across the antimeridian when that way is shorter.
  const dLng = ((((item.longitude - venue.longitude + 180) % 360) + 360) % 360) - 180;
  const north = (item.latitude - venue.latitude) * metresPerDegree;
  const east = dLng * metresPerDegree * Math.cos((venue.latitude * Math.PI) / 180);
  if (Math.hypot(north, east) <= Math.max(p.coreMinM, p.coreShare * venue.radiusM)) return null;
  return { row: Math.floor(north / p.spotM), column: Math.floor(east / p.spotM) };
}

/**
 * Which spot cells of one venue are routine, from the events the user's kept items fall on per cell
 * (`spotCell`, keyed by `cellKey`): those whose 3 × 3 neighbourhood holds at least routineEvents events.
 */
export function routineCells(
  eventsByCell: ReadonlyMap<number, ReadonlySet<number>>,
  p: ConfidenceParameters = CONFIDENCE,
): Set<number> {
  const routine = new Set<number>();
  for (const at of eventsByCell.keys()) {
    const { row, column } = cellOfKey(at);
    const events = new Set<number>();
    for (let dr = -1; dr <= 1 && events.size < p.routineEvents; dr++) {
      for (let dc = -1; dc <= 1; dc++) {
        for (const id of eventsByCell.get(cellKey(row + dr, column + dc)) ?? []) events.add(id);
      }
    }
    if (events.size >= p.routineEvents) routine.add(at);
  }
  return routine;
}

/**
 * A cell as one number. Cells lie within radius / spotM of the venue (10,000 at a 10 km radius and 1 m
 * cells): keys never collide.
 */
export const cellKey = (row: number, column: number) => (row + 50_000) * 100_000 + (column + 50_000);
const cellOfKey = (at: number) => ({
  row: Math.floor(at / 100_000) - 50_000,
  column: (at % 100_000) - 50_000,
});

/**
 * Which of a user's kept items at one venue are routine: outside the core, with the 3 × 3 cells
 * around the item's own holding kept items of at least routineEvents different events.
 */
export function routineFlags(
  items: readonly VenueItem[],
  venue: { latitude: number; longitude: number; radiusM: number },
  p: ConfidenceParameters = CONFIDENCE,
): boolean[] {
  const cells = items.map((item) => spotCell(item, venue, p));
  // Cells lie within radius / spotM of the venue (10,000 at a 10 km radius and 1 m cells): keys never collide.
  const key = (row: number, column: number) => row * 100_000 + column;
  const eventsByCell = new Map<number, Set<number>>();
  cells.forEach((cell, i) => {
    if (cell === null) return;
    const at = key(cell.row, cell.column);
    const events = eventsByCell.get(at) ?? new Set<number>();
    events.add((items[i] as VenueItem).eventId);
    eventsByCell.set(at, events);
  });
  // Items of one cell share the answer; counting stops at routineEvents.
  const answers = new Map<number, boolean>();
  const routineAround = (row: number, column: number): boolean => {
    const events = new Set<number>();
    for (let dr = -1; dr <= 1; dr++) {
      for (let dc = -1; dc <= 1; dc++) {
        for (const id of eventsByCell.get(key(row + dr, column + dc)) ?? []) {
          events.add(id);
          if (events.size >= p.routineEvents) return true;
        }
      }
    }
    return false;
  };
  return cells.map((cell) => {
    if (cell === null) return false;
    const at = key(cell.row, cell.column);
    let answer = answers.get(at);
    if (answer === undefined) {
      answer = routineAround(cell.row, cell.column);
      answers.set(at, answer);
    }
    return answer;
  });
}
