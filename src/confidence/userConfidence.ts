import {
  cellKey,
  hundredthsOfWeights,
  itemPlace,
  itemWeight,
  type PlaceSettings,
  routineCells,
  spotCell,
  type WeightedItem,
} from "./confidence.ts";

/**
 * One user's confidences from the user's kept items, as the batch statement keeps them
 * (docs/api.md §15): each item's weight and spot, then each event's confidence with the routine spots
 * of the user's items per venue. The confidence backfill computes with it what no batch did, and the
 * load tool's data-scale seed what batches would have stored: one implementation, so a seeded database
 * holds what the backfill would leave on it.
 */

/** A kept item with the catalog's facts its weight and spot are measured against. */
export type KeptItem = {
  eventId: number;
  venueId: number;
  latitude: number;
  longitude: number;
  takenAtMs: number;
  startsAtMs: number;
  /** Null: start + the default duration. */
  endsAtMs: number | null;
  venue: { latitude: number; longitude: number; radiusM: number | null };
};

export type Spot = { row: number; column: number };

/** What a store keeps of a matched item: its weight, and its spot cell (null inside the venue's core). */
export type ItemScore = { weight: number; spot: Spot | null };

/** A kept item with its weight and spot, as the per-event sums read it. */
export type ScoredItem = Omit<KeptItem, "latitude" | "longitude" | "venue"> & ItemScore;

/** An item's weight and spot against the event it matched, with the catalog as it is now. */
export function scoreItem(item: KeptItem, settings: PlaceSettings): ItemScore {
  const event = { startsAtMs: item.startsAtMs, endsAtMs: item.endsAtMs };
  return {
    weight: itemWeight(itemPlace(item, item.venue, event, settings)),
    // A venue without a radius of its own has the matching radius: its core is measured from that.
    spot: spotCell(item, { ...item.venue, radiusM: item.venue.radiusM ?? settings.radiusM }),
  };
}

/** Which of the user's spots are routine, per venue: the events of the user's items on each cell. */
function routineByVenue(items: readonly ScoredItem[]): Map<number, Set<number>> {
  const cellsByVenue = new Map<number, Map<number, Set<number>>>();
  for (const item of items) {
    if (item.spot === null) continue;
    const cells = cellsByVenue.get(item.venueId) ?? new Map<number, Set<number>>();
    const at = cellKey(item.spot.row, item.spot.column);
    cells.set(at, (cells.get(at) ?? new Set<number>()).add(item.eventId));
    cellsByVenue.set(item.venueId, cells);
  }
  return new Map([...cellsByVenue].map(([venue, cells]) => [venue, routineCells(cells)]));
}

/**
 * Each event's confidence in hundredths (as `user_events.confidence` holds it) from all of one user's
 * kept items: routine spots are a property of the user's items at a venue across events, so the
 * events of one user cannot be scored apart.
 */
export function userConfidences(
  items: readonly ScoredItem[],
  settings: { defaultDurationMinutes: number },
): Map<number, number> {
  const routine = routineByVenue(items);
  const byEvent = new Map<number, { start: number; end: number; items: WeightedItem[] }>();
  for (const item of items) {
    const spot = item.spot;
    const isRoutine =
      spot !== null && (routine.get(item.venueId)?.has(cellKey(spot.row, spot.column)) ?? false);
    const end = item.endsAtMs ?? item.startsAtMs + settings.defaultDurationMinutes * 60_000;
    const entry = byEvent.get(item.eventId) ?? { start: item.startsAtMs, end, items: [] };
    entry.items.push({ weight: item.weight, takenAtMs: item.takenAtMs, routine: isRoutine });
    byEvent.set(item.eventId, entry);
  }
  return new Map([...byEvent].map(([id, e]) => [id, hundredthsOfWeights(e.items, e.start, e.end)]));
}
