import type { Clock, SlidingWindowLimiter, WindowDecision } from "./budgets.ts";
import { RunLog } from "./runLog.ts";

/**
 * The in-process sliding-window log (the default store): exact, O(1) per admission in the usual case,
 * and bounded in memory.
 *
 * Memory bound: one RunLog per subject that was admitted during the last two windows (an idle subject
 * is swept once its newest admission is a whole window old, and sweeps run at least once a window).
 * Each RunLog holds at most 12 bytes x 2 x min(limit, windowMs) of typed arrays plus ~200 bytes of
 * object overhead: with the default 60 s window, under 1.5 MiB for a subject that saturates a limit of
 * a million, and 12 x 2 x limit bytes for ordinary limits. Subjects are API keys that already passed
 * authentication, so their number is bounded by the keys issued, not by what clients send.
 */
export class MemoryWindowLimiter implements SlidingWindowLimiter {
  private readonly logs = new Map<string, RunLog>();
  private lastSweep: number;

  constructor(
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {
    this.lastSweep = Math.floor(clock());
  }

  async admit(subject: string, limit: number): Promise<WindowDecision> {
    return this.admitNow(subject, limit);
  }

  /**
   * The synchronous decision. The instant is the clock floored to whole milliseconds, and never earlier
   * than the subject's newest admission: if the wall clock steps back, the admission is recorded as
   * later than it happened, which only ever makes the limiter stricter, never looser.
   */
  admitNow(subject: string, limit: number): WindowDecision {
    const now = Math.floor(this.clock());
    this.sweepIdle(now);
    let log = this.logs.get(subject);
    if (log === undefined) {
      log = new RunLog();
      this.logs.set(subject, log);
    }
    const at = Math.max(now, log.newest());
    log.expire(at - this.windowMs);
    if (log.total < limit) {
      log.record(at);
      return { kind: "admitted", remaining: limit - log.total, resetMs: log.oldest() + this.windowMs - at };
    }
    // Admitting needs the window to hold at most limit - 1 admissions: wait for the
    // (total - limit + 1)-th oldest to leave it.
    const freeing = log.instantOfRank(log.total - limit + 1);
    return { kind: "refused", retryAfterMs: freeing + this.windowMs - at };
  }

  degraded(): boolean {
    return false;
  }

  async close(): Promise<void> {
    this.logs.clear();
  }

  /** Subjects currently held in memory (tests check that idle ones are evicted). */
  trackedSubjects(): number {
    return this.logs.size;
  }

  /** Bytes held by all logs' typed arrays (tests check the documented bound). */
  trackedBytes(): number {
    let bytes = 0;
    for (const log of this.logs.values()) bytes += log.bytes();
    return bytes;
  }

  /**
   * Once a window, forgets subjects whose newest admission is a window old: their logs are empty in
   * effect, and forgetting them is indistinguishable from keeping them. Amortized O(1) per admission.
   */
  private sweepIdle(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    const cutoff = now - this.windowMs;
    for (const [subject, log] of this.logs) {
      if (log.newest() <= cutoff) this.logs.delete(subject);
    }
  }
}
