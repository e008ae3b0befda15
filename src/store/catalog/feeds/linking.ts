import { haversineMeters } from "../../../shards/geo.ts";

/**
 * The rule that makes one show from two feeds one event (docs/operations.md §3, *Linking*). An incoming
 * event that no earlier import of its source has seen is the same show as an existing event of another
 * source when all of these hold:
 * - their venues' points lie within LINK_DISTANCE_M of each other;
 * - they start within LINK_START_MS of each other or, when either time is unknown, on the same local date;
 * - they share a performer (same name once normalised) or their names are similar (at least half of
 *   their words in common).
 * Of several such events the one starting closest, then nearest, wins.
 */

export const LINK_DISTANCE_M = 500;
export const LINK_START_MS = 2 * 3_600_000;
const SIMILAR_NAMES = 0.5;

export type ShowFacts = {
  name: string;
  latitude: number;
  longitude: number;
  startsMs: number;
  /** `YYYY-MM-DD` at the venue. */
  localDate: string;
  timeUnknown: boolean;
  performerNames: readonly string[];
};

/** Lower case, accents and punctuation dropped, one space between words. */
export function normalisedName(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function words(name: string): Set<string> {
  return new Set(
    normalisedName(name)
      .split(" ")
      .filter((word) => word.length > 1),
  );
}

function similarNames(a: string, b: string): boolean {
  const left = words(a);
  const right = words(b);
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  const all = left.size + right.size - shared;
  return all > 0 && shared / all >= SIMILAR_NAMES;
}

function sharesPerformer(a: ShowFacts, b: ShowFacts): boolean {
  const names = new Set(a.performerNames.map(normalisedName));
  return b.performerNames.some((name) => names.has(normalisedName(name)));
}

export function distanceM(a: ShowFacts, b: ShowFacts): number {
  return haversineMeters(a.latitude, a.longitude, b.latitude, b.longitude);
}

export function isSameShow(incoming: ShowFacts, existing: ShowFacts): boolean {
  if (distanceM(incoming, existing) > LINK_DISTANCE_M) return false;
  const close =
    incoming.timeUnknown || existing.timeUnknown
      ? incoming.localDate === existing.localDate
      : Math.abs(incoming.startsMs - existing.startsMs) <= LINK_START_MS;
  return close && (sharesPerformer(incoming, existing) || similarNames(incoming.name, existing.name));
}

/**
 * The existing event the incoming one is, by the rule above, or null: the closest start, then the
 * closest venue, then the lowest id, so the answer never depends on the candidates' order.
 */
export function linkedShow<T extends ShowFacts & { id: number }>(
  incoming: ShowFacts,
  candidates: readonly T[],
): T | null {
  const rank = (c: T) => [Math.abs(c.startsMs - incoming.startsMs), distanceM(incoming, c), c.id];
  let best: T | null = null;
  for (const candidate of candidates) {
    if (!isSameShow(incoming, candidate)) continue;
    if (best === null || before(rank(candidate), rank(best))) best = candidate;
  }
  return best;
}

function before(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i] ?? 0, b[i] ?? 0];
    if (x !== y) return x < y;
  }
  return false;
}
