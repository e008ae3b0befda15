import { EARTH_RADIUS_M, haversineMeters } from "../shards/geo.ts";
import { timeGap } from "../shards/score.ts";

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
 * An event's evidence adds the weights of the user's kept items there and the share of the event's
 * duration that its non-routine items span. Items in the venue's core that are not routine count in
 * full; the evidence of the others (a routine item at routineWeight of its weight), and the span when no
 * item counts as in the core, saturates below a ceiling of outsideCap times the best of their weights: a
 * hotel room, a bar or a flat near the venue is a bystander's as often as a fan's, no number of photos
 * from there reaches what one in the stands gives, and how close the user got outside the core says
 * more than how many photos they took there:
 *
 *   ceiling    = outsideCap × max(weight of the items counted outside)
 *   sat(x)     = ceiling × (1 − exp(−x / ceiling)), 0 with no item outside
 *   evidence   = itemEvidence × Σ inside + spanEvidence × span + sat(itemEvidence × Σ outside)
 *                                                                                (an item in the core)
 *   evidence   = sat(itemEvidence × Σ outside + spanEvidence × span)
 *   confidence = 1 − exp(−evidence × timeUnknownShare), for an event whose date is known and time is not
 *   confidence = 1 − exp(−evidence) for every other, reported with two decimals
 *
 * An event whose time is unknown spans its venue's whole day: an item inside it says less about the show
 * than one inside a timed show's hours, so its evidence counts at timeUnknownShare (docs/api.md §15).
 *
 * An item's weight, spot cell and place in or out of the core are worked out here when it is matched
 * (and by the backfill); the sums, routine spots and span of a user's events are computed beside the
 * rows, by one definition in src/store/confidenceSql.ts.
 *
 * Closeness falls over the first part of the radius only (closeShare to floorShare): an audience is in
 * the building, near the venue's point, and a photo past floorShare of the radius is as likely a home, a
 * street or a queue wherever it lies beyond (docs/performance.md §11).
 *
 * Every term is non-negative and grows with closeness, with being inside rather than in the padding,
 * with the number of items and with the span (the ceiling too: it follows the best item), and moving an
 * item into the core only adds (its full weight, more than the ceiling it may take away), so the
 * confidence never falls when one of those grows and the routine flags stay as they are. An item's own
 * confidence is that of an event holding it alone.
 *
 * Routine: a spot (an item's cell and the eight around it, on a grid of spotM squares anchored at the
 * venue's centre) where the user's kept items at that venue fall on at least routineEvents different
 * events, and most of them lie outside the venue's core (the larger of coreMinM and coreShare of the
 * radius): a home or a workplace inside the radius, photographed on many event nights. Every item of
 * such a spot is routine, an item whose GPS fix strayed into the core too; a spot whose items lie mostly
 * in the core (the stands, the hall) used again and again is a season ticket, and none of its items is.
 * A routine item counts as outside the core, at routineWeight.
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
  outsideCap: number;
  timeUnknownShare: number;
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
  coreMinM: 75,
  spotM: 75,
  routineEvents: 4,
  outsideCap: 0.6,
  timeUnknownShare: 0.7,
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
  const before = item.takenAtMs < start;
  const gap = timeGap(item.takenAtMs, start, end);
  const padding = (before ? settings.beforeMinutes : settings.afterMinutes) * MINUTE_MS;
  return { distanceShare: distance / radius, timeShare: gap === 0 ? 0 : gap / padding, before };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
export function itemWeight(item: ItemPlace, p: ConfidenceParameters = CONFIDENCE): number {
  const far = clamp01((item.distanceShare - p.closeShare) / (p.floorShare - p.closeShare));
  const timing = 1 - (item.before ? p.beforeLoss : p.afterLoss) * clamp01(item.timeShare);
  return (1 - p.farLoss * far) * timing;
}

/**
 * One matched item on its own (a `matches` entry): the confidence of an event holding only it, where
 * there is no span (src/store/confidenceSql.ts `confidenceValue` with one item), to two decimals. Outside
 * the venue's core its evidence saturates below outsideCap times its own weight.
 */
export function itemConfidence(
  item: ItemPlace,
  inCore: boolean,
  timeUnknown = false,
  p: ConfidenceParameters = CONFIDENCE,
): number {
  const weight = itemWeight(item, p);
  const evidence = p.itemEvidence * weight;
  const ceiling = p.outsideCap * weight;
  const counted = inCore ? evidence : ceiling * (1 - Math.exp(-evidence / ceiling));
  const share = timeUnknown ? p.timeUnknownShare : 1;
  return Math.round(100 * (1 - Math.exp(-counted * share))) / 100;
}

export type Spot = { row: number; column: number };

/** What a store keeps of a matched item: its weight, its spot cell, and whether it lies in the venue's core. */
export type ItemScore = { weight: number; spot: Spot; inCore: boolean };

/** An item's weight and spot against the event it matched, with the catalog's facts as they are now. */
export function scoreItem(
  item: {
    latitude: number;
    longitude: number;
    takenAtMs: number;
    startsAtMs: number;
    /** Null: start + the default duration. */
    endsAtMs: number | null;
    venue: { latitude: number; longitude: number; radiusM: number | null };
  },
  settings: PlaceSettings,
): ItemScore {
  const event = { startsAtMs: item.startsAtMs, endsAtMs: item.endsAtMs };
  // A venue without a radius of its own has the matching radius: its core is measured from that.
  const { row, column, inCore } = spotCell(item, {
    ...item.venue,
    radiusM: item.venue.radiusM ?? settings.radiusM,
  });
  return { weight: itemWeight(itemPlace(item, item.venue, event, settings)), spot: { row, column }, inCore };
}

/**
 * An item's cell on a grid of spotM squares anchored at the venue's centre, and whether it lies in the
 * venue's core. Cells, not distances between items, so a store can keep one row per (cell, event) and
 * read a spot's events with one range lookup.
 */
export function spotCell(
  item: { latitude: number; longitude: number },
  venue: { latitude: number; longitude: number; radiusM: number },
  p: ConfidenceParameters = CONFIDENCE,
): Spot & { inCore: boolean } {
  const metresPerDegree = (EARTH_RADIUS_M * Math.PI) / 180;
  // Across the antimeridian when that way is shorter.
  const dLng = ((((item.longitude - venue.longitude + 180) % 360) + 360) % 360) - 180;
  const north = (item.latitude - venue.latitude) * metresPerDegree;
  const east = dLng * metresPerDegree * Math.cos((venue.latitude * Math.PI) / 180);
  return {
    row: Math.floor(north / p.spotM),
    column: Math.floor(east / p.spotM),
    inCore: Math.hypot(north, east) <= Math.max(p.coreMinM, p.coreShare * venue.radiusM),
  };
}
