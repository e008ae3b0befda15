import type { Config } from "../config.ts";
import type { Store } from "../store/db.ts";
import type {
  Admission,
  Budget,
  Clock,
  LimitsLog,
  RateLimitReport,
  RateLimits,
  RateSubject,
  SlidingWindowLimiter,
} from "./budgets.ts";
import { MemoryWindowLimiter } from "./memoryWindow.ts";
import { createOverrideCache, type LimitOverrides } from "./overrides.ts";
import { RedisWindowLimiter } from "./redisWindow.ts";

export type {
  Admission,
  Budget,
  Clock,
  LimitsLog,
  RateLimitReport,
  RateLimits,
  RateSubject,
} from "./budgets.ts";

export type RateLimitsOptions = {
  /** Where per-partner overrides (partners.ingest_limit, read_limit, write_limit) are read. */
  store: Store;
  log?: LimitsLog;
  /**
   * Drives the windows and the overrides' cache expiry. Default: Date.now for the in-memory store, and
   * the Redis server's own clock for a Redis store (so instances' clock skew does not matter).
   */
  clock?: Clock;
  /** Prefix of every Redis key; deployments or test runs sharing one Redis use different ones. */
  redisPrefix?: string;
  /**
   * Counts the `memory` store's budgets instead of a limiter of this instance's own: on a request
   * thread, the supervising thread's (see threadWindow.ts), so budgets stay exact across threads.
   */
  memoryLimiter?: SlidingWindowLimiter;
};

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), one named policy per budget:
 * `RateLimit-Policy: "read";q=100;w=60` (quota q per window w seconds) and
 * `RateLimit: "read";r=42;t=17` (r units left; t seconds until the oldest admission leaves the sliding
 * window and a unit comes back, which on a 429 equals Retry-After).
 */
function policyHeader(budget: Budget, limit: number, windowSeconds: number): Record<string, string> {
  return { "RateLimit-Policy": `"${budget}";q=${limit};w=${windowSeconds}` };
}

function stateHeaders(
  budget: Budget,
  limit: number,
  windowSeconds: number,
  remaining: number,
  resetSeconds: number,
): Record<string, string> {
  return {
    ...policyHeader(budget, limit, windowSeconds),
    RateLimit: `"${budget}";r=${remaining};t=${resetSeconds}`,
  };
}

/** Whole seconds, rounded up, never 0: waiting this long is always enough (docs/api.md §10, Retry-After >= 1). */
function wholeSecondsAfter(milliseconds: number): number {
  return Math.max(1, Math.ceil(milliseconds / 1000));
}

const DEFAULT_REDIS_PREFIX = "rollcall:ratelimit:";

const ADMITTED_UNLIMITED: Admission = { admitted: true, headers: {} };

function createLimiter(config: Config, options: RateLimitsOptions): SlidingWindowLimiter {
  const windowMs = config.rateLimit.windowSeconds * 1000;
  if (config.rateLimit.store === "memory") {
    return options.memoryLimiter ?? new MemoryWindowLimiter(windowMs, options.clock ?? Date.now);
  }
  return new RedisWindowLimiter({
    url: config.rateLimit.store,
    windowMs,
    prefix: options.redisPrefix ?? DEFAULT_REDIS_PREFIX,
    clock: options.clock ?? null,
    log: options.log ?? (() => {}),
  });
}

/**
 * The one limiter request threads share when budgets are counted in memory, kept by the supervising
 * thread; null when nothing is counted in memory (limits off, or a Redis store every thread reaches).
 */
export function sharedMemoryLimiter(config: Config): SlidingWindowLimiter | null {
  if (!config.rateLimit.enabled || config.rateLimit.store !== "memory") return null;
  return new MemoryWindowLimiter(config.rateLimit.windowSeconds * 1000, Date.now);
}

export { hostWindow, ThreadWindowLimiter } from "./threadWindow.ts";

/**
 * Builds the service's rate limiting: per API key (so per environment), per budget, over a sliding window
 * of RATE_LIMIT_WINDOW_SECONDS. A partner's overrides win over the RATE_LIMIT_* defaults and reach
 * running servers within OVERRIDES_TTL_MS. With RATE_LIMIT_ENABLED=false every request is admitted
 * uncounted (no store is opened) and /health still reports the effective numbers.
 */
export function createRateLimits(config: Config, options: RateLimitsOptions): RateLimits {
  const { enabled, windowSeconds } = config.rateLimit;
  const defaults: LimitOverrides = {
    ingest: config.rateLimit.ingest,
    read: config.rateLimit.read,
    write: config.rateLimit.write,
  };
  const storeKind = config.rateLimit.store === "memory" ? "memory" : "redis";
  const limiter = enabled ? createLimiter(config, options) : null;
  const overridesOf = createOverrideCache(options.store, options.clock ?? Date.now);

  async function effectiveLimits(partnerId: string): Promise<LimitOverrides> {
    const overrides = await overridesOf(partnerId);
    return {
      ingest: overrides.ingest ?? defaults.ingest,
      read: overrides.read ?? defaults.read,
      write: overrides.write ?? defaults.write,
    };
  }

  async function admit(subject: RateSubject, budget: Budget): Promise<Admission> {
    if (limiter === null) return ADMITTED_UNLIMITED;
    const limit = (await effectiveLimits(subject.partnerId))[budget];
    if (limit === null) return ADMITTED_UNLIMITED;
    const decision = await limiter.admit(`${subject.environment}:${subject.keyId}:${budget}`, limit);
    switch (decision.kind) {
      case "admitted":
        return {
          admitted: true,
          headers: stateHeaders(
            budget,
            limit,
            windowSeconds,
            decision.remaining,
            wholeSecondsAfter(decision.resetMs),
          ),
        };
      case "refused": {
        const retryAfterSeconds = wholeSecondsAfter(decision.retryAfterMs);
        return {
          admitted: false,
          retryAfterSeconds,
          headers: stateHeaders(budget, limit, windowSeconds, 0, retryAfterSeconds),
        };
      }
    }
  }

  async function report(partnerId: string): Promise<RateLimitReport> {
    const limits = await effectiveLimits(partnerId);
    return {
      enabled,
      window_seconds: windowSeconds,
      ingest_per_window: limits.ingest,
      read_per_window: limits.read,
      write_per_window: limits.write,
      store: storeKind,
      degraded: limiter?.degraded() ?? false,
    };
  }

  return {
    admit,
    report,
    storeState: () => ({ store: storeKind, degraded: limiter?.degraded() ?? false }),
    close: async () => {
      await limiter?.close();
    },
  };
}
