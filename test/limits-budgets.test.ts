import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseConfig } from "../src/config.ts";
import { type Budget, createRateLimits, type RateLimits, type RateSubject } from "../src/limits/index.ts";
import { OVERRIDES_TTL_MS, setPartnerLimits } from "../src/limits/overrides.ts";
import { createPartner } from "../src/store/keys.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { CLOSED_REDIS_URL, flushRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from "./support/redis.ts";

const START = 1_700_000_000_000;
const LIMITS = {
  RATE_LIMIT_ENABLED: "true",
  RATE_LIMIT_INGEST: "3",
  RATE_LIMIT_READ: "2",
  RATE_LIMIT_WRITE: "1",
};

let database: TestDatabase;
let now = START;
const opened: RateLimits[] = [];
const redisPrefix = uniqueRedisPrefix();

beforeAll(async () => {
  database = await createTestDatabase(2);
  await createPartner(database.store, { id: "acme", name: "Acme" });
  await createPartner(database.store, { id: "globex", name: "Globex" });
});
afterAll(async () => {
  await Promise.all(opened.map((limits) => limits.close()));
  await flushRedisPrefix(redisPrefix);
  await database.drop();
});

function limitsWith(env: Record<string, string>, log: (event: string) => void = () => {}): RateLimits {
  const limits = createRateLimits(parseConfig(env), {
    store: database.store,
    clock: () => now,
    log,
    redisPrefix,
  });
  opened.push(limits);
  return limits;
}

let keys = 0;
function subject(partnerId: string, environment: "sandbox" | "production"): RateSubject {
  keys += 1;
  return { partnerId, environment, keyId: `00000000-0000-4000-8000-${String(keys).padStart(12, "0")}` };
}

describe("rate limits per key and budget", () => {
  test("disabled: everything is admitted without headers, and /health still reports the numbers", async () => {
    const limits = limitsWith({ ...LIMITS, RATE_LIMIT_ENABLED: "false" });
    const key = subject("acme", "sandbox");
    for (let i = 0; i < 10; i += 1)
      expect(await limits.admit(key, "write")).toEqual({ admitted: true, headers: {} });
    expect(await limits.report("acme")).toEqual({
      enabled: false,
      window_seconds: 60,
      ingest_per_window: 3,
      read_per_window: 2,
      write_per_window: 1,
      store: "memory",
      degraded: false,
    });
  });

  test("budgets, keys and environments never share: each (key, budget) admits exactly its limit", async () => {
    const budgets: Budget[] = ["ingest", "read", "write"];
    const limitOf: Record<Budget, number> = { ingest: 3, read: 2, write: 1 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(...budgets)), { maxLength: 40 }),
        async (requests) => {
          const limits = limitsWith(LIMITS);
          const subjects = [
            subject("acme", "sandbox"),
            subject("acme", "production"),
            subject("acme", "sandbox"),
            subject("globex", "sandbox"),
          ];
          const sent = new Map<string, number>();
          const admitted = new Map<string, number>();
          for (const [who, budget] of requests) {
            const target = subjects[who];
            if (target === undefined) throw new Error(`no subject ${who}`);
            const id = `${who}/${budget}`;
            sent.set(id, (sent.get(id) ?? 0) + 1);
            const admission = await limits.admit(target, budget);
            if (admission.admitted) admitted.set(id, (admitted.get(id) ?? 0) + 1);
          }
          for (const [id, count] of sent) {
            const budget = id.split("/")[1] as Budget;
            expect(admitted.get(id) ?? 0).toBe(Math.min(count, limitOf[budget]));
          }
          await limits.close();
        },
      ),
      { numRuns: 50 },
    );
  });

  test("Retry-After is the whole number of seconds until a request would be admitted", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 30_000 }), { maxLength: 20 }),
        async (limit, gaps) => {
          const limits = limitsWith({ ...LIMITS, RATE_LIMIT_READ: String(limit) });
          const key = subject("acme", "sandbox");
          now = START;
          for (const gap of gaps) {
            now += gap;
            await limits.admit(key, "read");
          }
          let admission = await limits.admit(key, "read");
          while (admission.admitted) admission = await limits.admit(key, "read");
          const seconds = admission.retryAfterSeconds;
          expect(Number.isInteger(seconds) && seconds >= 1).toBe(true);
          expect(admission.headers).toEqual({
            "RateLimit-Policy": `"read";q=${limit};w=60`,
            RateLimit: `"read";r=0;t=${seconds}`,
          });
          const refusedAt = now;
          if (seconds > 1) {
            now = refusedAt + (seconds - 1) * 1000;
            expect((await limits.admit(key, "read")).admitted).toBe(false);
          }
          now = refusedAt + seconds * 1000;
          expect((await limits.admit(key, "read")).admitted).toBe(true);
          await limits.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  test("admitted requests carry the policy and what is left", async () => {
    now = START;
    const limits = limitsWith(LIMITS);
    const key = subject("acme", "sandbox");
    expect((await limits.admit(key, "ingest")).headers).toEqual({
      "RateLimit-Policy": `"ingest";q=3;w=60`,
      RateLimit: `"ingest";r=2;t=60`,
    });
    now += 15_500;
    expect((await limits.admit(key, "ingest")).headers).toEqual({
      "RateLimit-Policy": `"ingest";q=3;w=60`,
      RateLimit: `"ingest";r=1;t=45`,
    });
  });

  test("a partner's overrides win over the defaults and reach a running limiter within the TTL", async () => {
    now = START;
    const limits = limitsWith(LIMITS);
    const key = subject("globex", "sandbox");
    expect((await limits.admit(key, "write")).admitted).toBe(true);
    expect((await limits.admit(key, "write")).admitted).toBe(false);
    await setPartnerLimits(database.store, "globex", { write: 3, read: 7 });
    now += OVERRIDES_TTL_MS;
    expect((await limits.admit(key, "write")).admitted).toBe(true);
    expect(await limits.report("globex")).toMatchObject({
      ingest_per_window: 3,
      read_per_window: 7,
      write_per_window: 3,
    });
    expect(await limits.report("acme")).toMatchObject({
      ingest_per_window: 3,
      read_per_window: 2,
      write_per_window: 1,
    });
    await setPartnerLimits(database.store, "globex", { ingest: null, read: null, write: null });
    now += OVERRIDES_TTL_MS;
    expect(await limits.report("globex")).toMatchObject({
      ingest_per_window: 3,
      read_per_window: 2,
      write_per_window: 1,
    });
  });
});

describe("rate limits in Redis", () => {
  test("two limiters on one Redis admit together exactly one budget", async () => {
    const env = { ...LIMITS, RATE_LIMIT_READ: "25", RATE_LIMIT_STORE: TEST_REDIS_URL };
    const [first, second] = [limitsWith(env), limitsWith(env)];
    const key = subject("acme", "production");
    const decisions = await Promise.all(
      Array.from({ length: 60 }, (_, i) => ((i % 2 === 0 ? first : second) ?? first).admit(key, "read")),
    );
    expect(decisions.filter((d) => d.admitted).length).toBe(25);
    expect(await first.report("acme")).toMatchObject({ store: "redis", degraded: false });
  });

  test("what an instance admitted while Redis was away still counts once Redis is back", async () => {
    const limits = limitsWith({ ...LIMITS, RATE_LIMIT_STORE: TEST_REDIS_URL });
    const key = subject("acme", "sandbox");
    expect((await limits.admit(key, "write")).admitted).toBe(true);
    // Redis comes back without the admission (restarted empty, or it was counted here during an outage).
    await flushRedisPrefix(redisPrefix);
    expect(await limits.admit(key, "write")).toMatchObject({ admitted: false, retryAfterSeconds: 60 });
  });

  test("Redis down: each instance counts on its own, /health says degraded, the outage is logged once", async () => {
    const events: string[] = [];
    const limits = limitsWith({ ...LIMITS, RATE_LIMIT_STORE: CLOSED_REDIS_URL }, (event) =>
      events.push(event),
    );
    const key = subject("acme", "sandbox");
    const decisions = [];
    for (let i = 0; i < 20; i += 1) decisions.push(await limits.admit(key, "write"));
    // The guarantee of docs/api.md §10 still holds for this instance: one write a window.
    expect(decisions.map((d) => d.admitted)).toEqual([true, ...Array(19).fill(false)]);
    expect(decisions[1]).toMatchObject({ admitted: false, retryAfterSeconds: 60 });
    expect(await limits.report("acme")).toMatchObject({ enabled: true, store: "redis", degraded: true });
    expect(events).toEqual(["rate_limit_store_unavailable"]);
  });
});
