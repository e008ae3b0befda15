import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { SlidingWindowLimiter, WindowDecision } from "../src/limits/budgets.ts";
import { MemoryWindowLimiter } from "../src/limits/memoryWindow.ts";
import { RedisWindowLimiter } from "../src/limits/redisWindow.ts";
import { flushRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from "./support/redis.ts";

/**
 * The sliding-window log, checked against a brute-force model of docs/api.md §10 with an injected clock, for
 * both stores: the same properties must hold in process and in Redis.
 */

/** The definition, literally: every admission is remembered; a request at t counts those in (t - W, t]. */
class ModelLog {
  private readonly admitted = new Map<string, number[]>();

  decide(subject: string, limit: number, windowMs: number, at: number): WindowDecision {
    const all = this.admitted.get(subject) ?? [];
    this.admitted.set(subject, all);
    const inWindow = all.filter((instant) => instant > at - windowMs);
    if (inWindow.length < limit) {
      all.push(at);
      return {
        kind: "admitted",
        remaining: limit - inWindow.length - 1,
        resetMs: (inWindow[0] ?? at) + windowMs - at,
      };
    }
    return { kind: "refused", retryAfterMs: (inWindow[inWindow.length - limit] ?? at) + windowMs - at };
  }
}

type Harness = { limiter: SlidingWindowLimiter; setTime(ms: number): void };

const redisPrefix = uniqueRedisPrefix();
afterAll(() => flushRedisPrefix(redisPrefix));

const stores: Record<string, (windowMs: number) => Harness> = {
  memory(windowMs) {
    let now = 0;
    return { limiter: new MemoryWindowLimiter(windowMs, () => now), setTime: (ms) => (now = ms) };
  },
  redis(windowMs) {
    let now = 0;
    const limiter = new RedisWindowLimiter({
      url: TEST_REDIS_URL,
      windowMs,
      prefix: redisPrefix,
      clock: () => now,
      log: () => {},
    });
    return { limiter, setTime: (ms) => (now = ms) };
  },
};

/**
 * Steps of a scenario: time advances, then a request. Advances are often 0 (admissions sharing a
 * millisecond) or land exactly on the window's edge, where off-by-one mistakes live.
 */
type Advance = number | "window" | "window - 1 ms";

function advanceBy(advance: Advance, windowMs: number): number {
  if (advance === "window") return windowMs;
  if (advance === "window - 1 ms") return windowMs - 1;
  return advance;
}

const scenario = fc.record({
  windowMs: fc.integer({ min: 1_000, max: 60_000 }),
  limits: fc.tuple(
    fc.integer({ min: 1, max: 8 }),
    fc.integer({ min: 1, max: 8 }),
    fc.integer({ min: 1, max: 8 }),
  ),
  steps: fc.array(
    fc.record({
      advance: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 70_000 }),
        fc.constantFrom<Advance>("window", "window - 1 ms"),
      ),
      subject: fc.integer({ min: 0, max: 2 }),
      /** An operator lowered the limit for this one request (a per-partner override). */
      lowered: fc.boolean(),
    }),
    { maxLength: 60 },
  ),
});

let run = 0;

for (const [storeName, harnessFor] of Object.entries(stores)) {
  describe(`sliding window (${storeName})`, () => {
    const runs = storeName === "memory" ? 300 : 60;

    test("decides exactly as the definition, and no window ever holds more than the limit", async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ windowMs, limits, steps }) => {
          run += 1;
          const { limiter, setTime } = harnessFor(windowMs);
          const model = new ModelLog();
          const admissions: { subject: number; at: number; limit: number }[] = [];
          let now = 1_700_000_000_000;
          try {
            for (const step of steps) {
              now += advanceBy(step.advance, windowMs);
              setTime(now);
              const base = limits[step.subject] ?? 1;
              const limit = step.lowered ? Math.max(1, base - 2) : base;
              const subject = `run${run}:s${step.subject}`;
              const decision = await limiter.admit(subject, limit);
              expect(decision).toEqual(model.decide(subject, limit, windowMs, now));
              if (decision.kind === "admitted") admissions.push({ subject: step.subject, at: now, limit });
            }
          } finally {
            await limiter.close();
          }
          // Each admission, counted with the ones before it in its window, is within the limit then in force.
          admissions.forEach(({ subject, at, limit }, index) => {
            const inWindow = admissions
              .slice(0, index + 1)
              .filter((earlier) => earlier.subject === subject && earlier.at > at - windowMs);
            expect(inWindow.length).toBeLessThanOrEqual(limit);
          });
        }),
        { numRuns: runs },
      );
    });

    test("a refused request waits exactly retryAfterMs: refused 1 ms before, admitted at it", async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ windowMs, limits, steps }) => {
          run += 1;
          const { limiter, setTime } = harnessFor(windowMs);
          const limit = limits[0];
          const subject = `run${run}:probe`;
          let now = 1_700_000_000_000;
          setTime(now);
          try {
            for (const step of steps) {
              now += advanceBy(step.advance, windowMs);
              setTime(now);
              await limiter.admit(subject, limit);
            }
            let decision = await limiter.admit(subject, limit);
            while (decision.kind === "admitted") decision = await limiter.admit(subject, limit);
            expect(decision.retryAfterMs).toBeGreaterThanOrEqual(1);
            setTime(now + decision.retryAfterMs - 1);
            expect((await limiter.admit(subject, limit)).kind).toBe("refused");
            setTime(now + decision.retryAfterMs);
            expect((await limiter.admit(subject, limit)).kind).toBe("admitted");
          } finally {
            await limiter.close();
          }
        }),
        { numRuns: runs },
      );
    });

    /**
     * Accuracy in the manner of Unkey's test: a steady request rate for several windows. When the request
     * period divides the window, the log admits exactly `limit` per window; otherwise each refill waits for
     * the first request after a window, so it admits between limit x floor(D / (W + period)) and
     * limit x ceil(D / W).
     */
    test.each([
      [100, 60_000, 250, 5],
      [10, 1_000, 10, 6],
      [7, 10_000, 333, 4],
      [50, 60_000, 2_000, 3],
    ])(
      "steady rate: limit %i per %i ms, one request every %i ms, %i windows",
      async (limit, windowMs, periodMs, windows) => {
        run += 1;
        const { limiter, setTime } = harnessFor(windowMs);
        const duration = windows * windowMs;
        const start = 1_700_000_000_000;
        let admitted = 0;
        let requests = 0;
        try {
          for (let t = 0; t < duration; t += periodMs) {
            setTime(start + t);
            requests += 1;
            if ((await limiter.admit(`run${run}:steady`, limit)).kind === "admitted") admitted += 1;
          }
        } finally {
          await limiter.close();
        }
        if (windowMs % periodMs === 0) {
          expect(admitted).toBe(Math.min(requests, limit * windows));
        } else {
          expect(admitted).toBeLessThanOrEqual(limit * Math.ceil(duration / windowMs));
          expect(admitted).toBeGreaterThanOrEqual(
            Math.min(requests, limit * Math.floor(duration / (windowMs + periodMs))),
          );
        }
      },
    );
  });
}
