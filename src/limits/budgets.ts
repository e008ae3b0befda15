import type { Environment } from "../config.ts";

/** The three independent budgets of docs/api.md §10. */
export type Budget = "ingest" | "read" | "write";

/** Who spends a budget: one API key (so sandbox and production keys never share a budget). */
export type RateSubject = {
  keyId: string;
  partnerId: string;
  environment: Environment;
};

export type Admission =
  | { admitted: true; headers: Record<string, string> }
  | { admitted: false; retryAfterSeconds: number; headers: Record<string, string> };

/** What `/health` reports (docs/api.md §12). */
export type RateLimitReport = {
  enabled: boolean;
  window_seconds: number;
  ingest_per_window: number | null;
  read_per_window: number | null;
  write_per_window: number | null;
  /** Where budgets are counted: this process, or Redis shared by every instance. */
  store: "memory" | "redis";
  /** True while the shared store does not answer and requests are admitted without counting. */
  degraded: boolean;
};

/** The rate limiting the HTTP layer sees: it knows budgets and subjects, never how they are counted. */
export interface RateLimits {
  admit(subject: RateSubject, budget: Budget): Promise<Admission>;
  report(partnerId: string): Promise<RateLimitReport>;
  /** Where budgets are counted, and whether a shared store is unreachable (counting per instance). */
  storeState(): { store: "memory" | "redis"; degraded: boolean };
  close(): Promise<void>;
}

/**
 * The counting core of rate limiting, behind an interface that knows nothing of HTTP, partners or budgets
 * by name: a subject (an opaque string) spends one unit of a per-window limit, or is told how long to wait.
 *
 * Semantics, shared by every implementation (an exact sliding-window log):
 * - A request at instant t (whole milliseconds of the limiter's clock) is admitted iff fewer than `limit`
 *   admissions of the same subject lie in (t - window, t]. So any interval of `window` milliseconds holds at
 *   most `limit` admissions, and a refused request spends nothing.
 * - Refused: `retryAfterMs` is the exact wait until a request would be admitted (at least 1).
 * - Admitted: `remaining` is how many more requests would be admitted right now, and `resetMs` how long until
 *   the oldest admission in the window leaves it (so a unit comes back).
 */
export type WindowDecision =
  | { kind: "admitted"; remaining: number; resetMs: number }
  | { kind: "refused"; retryAfterMs: number };

export interface SlidingWindowLimiter {
  admit(subject: string, limit: number): Promise<WindowDecision>;
  /** Whether the limiter is counting per instance right now because its shared store does not answer. */
  degraded(): boolean;
  close(): Promise<void>;
}

/** The limiter's notion of now, in milliseconds; injected so tests drive time instead of waiting for it. */
export type Clock = () => number;

/** How the limiting layer reports operational events (the HTTP layer's log has this shape). */
export type LimitsLog = (event: string, fields?: Record<string, unknown>) => void;
