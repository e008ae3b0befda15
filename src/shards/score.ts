/*
 * The matching rule's ranking (docs/api.md §5), defined once: the engine, the reference matcher and the
 * quality benchmark all call it, so they cannot drift apart. The arithmetic is fixed to the bit (the
 * reference and the engine must give equal scores for equal inputs, ties included).
 */

/** Milliseconds a capture at `takenAtMs` lies outside [start, end]; 0 inside. */
export function timeGap(takenAtMs: number, startMs: number, endMs: number): number {
  if (takenAtMs < startMs) return startMs - takenAtMs;
  return takenAtMs > endMs ? takenAtMs - endMs : 0;
}

/**
 * A candidate's score: `reach` (distance over the radius that applies, 0 at the centre, 1 at the edge)
 * plus the time gap over the padding on its side (0 inside [start, end], up to 1 at the window's edge).
 */
export function candidateScore(
  reach: number,
  takenAtMs: number,
  startMs: number,
  endMs: number,
  beforeMs: number,
  afterMs: number,
): number {
  if (takenAtMs < startMs) return reach + (startMs - takenAtMs) / beforeMs;
  return takenAtMs > endMs ? reach + (takenAtMs - endMs) / afterMs : reach;
}

/** What ranks one candidate against another. */
export type Ranked = { score: number; gap: number; distance: number; id: number };

/**
 * Whether a candidate ranks before `other`: the smaller score, then the smaller time gap, then the
 * smaller distance, then the smaller event id. Its members are passed apart so the engine's hot loop
 * allocates nothing.
 */
export function ranksBefore(
  score: number,
  gap: number,
  distance: number,
  id: number,
  other: Ranked,
): boolean {
  if (score !== other.score) return score < other.score;
  if (gap !== other.gap) return gap < other.gap;
  if (distance !== other.distance) return distance < other.distance;
  return id < other.id;
}
