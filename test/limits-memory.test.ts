import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MemoryWindowLimiter } from "../src/limits/memoryWindow.ts";
import { RedisWindowLimiter } from "../src/limits/redisWindow.ts";
import { flushRedisPrefix, redisKeysUnder, TEST_REDIS_URL, uniqueRedisPrefix } from "./support/redis.ts";

const START = 1_700_000_000_000;

describe("memory bound of the in-process log", () => {
  test("idle subjects are evicted once a window has passed", async () => {
    let now = START;
    const limiter = new MemoryWindowLimiter(60_000, () => now);
    for (let key = 0; key < 100; key += 1) await limiter.admit(`key${key}`, 5);
    expect(limiter.trackedSubjects()).toBe(100);
    now += 30_000;
    await limiter.admit("key0", 5);
    expect(limiter.trackedSubjects()).toBe(100);
    now += 30_000;
    await limiter.admit("fresh", 5);
    // The 99 subjects idle for a whole window are gone; key0 (admitted 30 s ago) and the new one stay.
    expect(limiter.trackedSubjects()).toBe(2);
  });

  test("a subject holds at most 24 bytes per run and min(limit, window ms) runs, whatever the limit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 100, max: 2_000 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3_000 }),
        async (limit, windowMs, gaps) => {
          let now = START;
          const limiter = new MemoryWindowLimiter(windowMs, () => now);
          for (const gap of gaps) {
            now += gap;
            await limiter.admit("subject", limit);
          }
          // Twelve bytes a run, capacity below twice the most runs a window held, four runs to start with.
          expect(limiter.trackedBytes()).toBeLessThanOrEqual(Math.max(48, 24 * Math.min(limit, windowMs)));
        },
      ),
      { numRuns: 40 },
    );
  });

  test("a limit of a million, saturated for two windows, stays within the window-ms bound", async () => {
    let now = START;
    const windowMs = 1_000;
    const limiter = new MemoryWindowLimiter(windowMs, () => now);
    let admitted = 0;
    for (let ms = 0; ms < 2 * windowMs; ms += 1) {
      now = START + ms;
      for (let burst = 0; burst < 10; burst += 1) {
        if ((await limiter.admit("busy", 1_000_000)).kind === "admitted") admitted += 1;
      }
    }
    expect(admitted).toBe(20_000);
    expect(limiter.trackedBytes()).toBeLessThanOrEqual(24 * windowMs);
  });

  test("a clock that steps back never admits more than the limit", async () => {
    let now = START;
    const limiter = new MemoryWindowLimiter(10_000, () => now);
    expect((await limiter.admit("s", 2)).kind).toBe("admitted");
    now = START + 9_000;
    expect((await limiter.admit("s", 2)).kind).toBe("admitted");
    now = START - 60_000;
    expect(await limiter.admit("s", 2)).toEqual({ kind: "refused", retryAfterMs: 1_000 });
  });
});

describe("expiry of the Redis log", () => {
  const prefix = uniqueRedisPrefix();
  afterAll(() => flushRedisPrefix(prefix));

  test("both keys of a subject expire one window after its last admission", async () => {
    const limiter = new RedisWindowLimiter({
      url: TEST_REDIS_URL,
      windowMs: 30_000,
      prefix,
      clock: null,
      log: () => {},
    });
    try {
      expect((await limiter.admit("idle", 3)).kind).toBe("admitted");
    } finally {
      await limiter.close();
    }
    const keys = await redisKeysUnder(prefix);
    expect(keys.map((k) => k.key).sort()).toEqual([`${prefix}{idle}:counts`, `${prefix}{idle}:runs`]);
    for (const { ttlMs } of keys) {
      expect(ttlMs).toBeGreaterThan(0);
      expect(ttlMs).toBeLessThanOrEqual(30_000);
    }
  });
});
