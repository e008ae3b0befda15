import type { MatchSettings } from "./matcher.ts";

const MINUTE_MS = 60_000;

/*
 * Where and when a capture can match an event (docs/api.md §5), defined once for the index build and for
 * the reach a catalog correction widens to (reach.ts); the reference (reference.ts) keeps its own plain copy
 * as the oracle both are tested against.
 */

/** An event's window with the settings' padding; `endMs` NaN: the default duration applies. */
export function paddedWindow(startMs: number, endMs: number, settings: MatchSettings): [number, number] {
  const end = Number.isNaN(endMs) ? startMs + settings.defaultDurationMinutes * MINUTE_MS : endMs;
  return [startMs - settings.beforeMinutes * MINUTE_MS, end + settings.afterMinutes * MINUTE_MS];
}

/** A venue's radius in metres; `storedM` NaN: MATCH_RADIUS_M. */
export function venueRadius(storedM: number, settings: MatchSettings): number {
  return Number.isNaN(storedM) ? settings.radiusM : storedM;
}
