/**
 * One subject's admissions inside the current window, oldest first, as runs of (millisecond, count):
 * admissions in the same millisecond share one run. That keeps the log exact (the clock has millisecond
 * resolution, so nothing finer exists to remember) while bounding it by the number of distinct
 * milliseconds in a window, whatever the limit: at most min(limit, windowMs) runs.
 *
 * Memory layout: a ring buffer over two parallel typed arrays (Float64Array for instants, because epoch
 * milliseconds exceed 2^32; Uint32Array for counts, because a run never holds more than the limit, at
 * most 1e9 by configuration). Twelve bytes a run and no per-admission objects, so the garbage collector
 * never walks the log. The capacity is a power of two so that wrapping is a mask, and it doubles only
 * when the ring is full of runs still inside the window: it stays below twice the largest number of
 * runs the window ever held, which is itself at most min(limit, windowMs).
 */
export class RunLog {
  private instants: Float64Array;
  private counts: Uint32Array;
  private head = 0;
  private length = 0;
  /** Admissions in the log (the sum of the run counts). */
  total = 0;

  constructor(initialCapacity = 4) {
    this.instants = new Float64Array(initialCapacity);
    this.counts = new Uint32Array(initialCapacity);
  }

  /** The most recent admission instant, or -Infinity for an empty log. */
  newest(): number {
    if (this.length === 0) return Number.NEGATIVE_INFINITY;
    return this.instantAt(this.length - 1);
  }

  /** The instant of the oldest admission still in the log; only called on a non-empty log. */
  oldest(): number {
    return this.instantAt(0);
  }

  /** Drops every run at or before `cutoff`: those admissions no longer count against the window. */
  expire(cutoff: number): void {
    const mask = this.instants.length - 1;
    while (this.length > 0 && (this.instants[this.head] ?? 0) <= cutoff) {
      this.total -= this.counts[this.head] ?? 0;
      this.head = (this.head + 1) & mask;
      this.length -= 1;
    }
  }

  /** Records one admission at `instant`, which is never before `newest()`. */
  record(instant: number): void {
    if (this.length > 0 && this.newest() === instant) {
      const last = (this.head + this.length - 1) & (this.instants.length - 1);
      this.counts[last] = (this.counts[last] ?? 0) + 1;
    } else {
      if (this.length === this.instants.length) this.grow();
      const slot = (this.head + this.length) & (this.instants.length - 1);
      this.instants[slot] = instant;
      this.counts[slot] = 1;
      this.length += 1;
    }
    this.total += 1;
  }

  /**
   * The instant of the admission that is the `rank`-th oldest (1-based), walking runs from the front.
   * Only called with 1 <= rank <= total. Usually rank is 1 (the front run); it is larger only after an
   * operator lowered the limit below what the window already holds.
   */
  instantOfRank(rank: number): number {
    let seen = 0;
    for (let i = 0; i < this.length; i += 1) {
      const slot = (this.head + i) & (this.instants.length - 1);
      seen += this.counts[slot] ?? 0;
      if (seen >= rank) return this.instants[slot] ?? 0;
    }
    return this.newest();
  }

  /** Bytes held by the typed arrays, for documentation checks and tests of the memory bound. */
  bytes(): number {
    return this.instants.byteLength + this.counts.byteLength;
  }

  private instantAt(offset: number): number {
    return this.instants[(this.head + offset) & (this.instants.length - 1)] ?? 0;
  }

  /** Doubles the ring, unrolling it so the oldest run lands at index 0. */
  private grow(): void {
    const capacity = this.instants.length * 2;
    const instants = new Float64Array(capacity);
    const counts = new Uint32Array(capacity);
    for (let i = 0; i < this.length; i += 1) {
      const slot = (this.head + i) & (this.instants.length - 1);
      instants[i] = this.instants[slot] ?? 0;
      counts[i] = this.counts[slot] ?? 0;
    }
    this.instants = instants;
    this.counts = counts;
    this.head = 0;
  }
}
