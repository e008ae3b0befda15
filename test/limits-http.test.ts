import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Context } from "../src/cli/command.ts";
import { partnerLimits } from "../src/cli/partnerLimits.ts";
import { OVERRIDES_TTL_MS } from "../src/limits/overrides.ts";
import { CLOSED_REDIS_URL, flushRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from "./support/redis.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const START = 1_700_000_000_000;
const USER = "/v1/users/7d0b1f4e-3c1a-4f7e-9a51-2f8a6c0d9e11";

describe("rate limits over HTTP (in memory)", () => {
  let server: TestServer;
  let key: string;
  let now = START;

  beforeAll(async () => {
    server = await startTestServer(
      { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_READ: "2", RATE_LIMIT_WRITE: "5" },
      { clock: () => now },
    );
    key = (await server.partner("acme")).sandbox;
  });
  afterAll(() => server.close());

  test("a spent budget answers 429 with the envelope, Retry-After and the RateLimit fields", async () => {
    const first = await server.call("GET", `${USER}/stats`, { key });
    // Admitted: the user does not exist, and that error response still carries the budget's state.
    expect(first.status).toBe(404);
    expect(first.headers.get("ratelimit-policy")).toBe(`"read";q=2;w=60`);
    expect(first.headers.get("ratelimit")).toBe(`"read";r=1;t=60`);
    now += 20_000;
    const second = await server.call("GET", `${USER}/events`, { key });
    expect(second.status).toBe(404);
    expect(second.headers.get("ratelimit")).toBe(`"read";r=0;t=40`);
    now += 500;
    const refused = await server.call("GET", `${USER}/stats`, { key });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: "rate_limited" } });
    expect(typeof refused.body.error.message).toBe("string");
    expect(refused.headers.get("retry-after")).toBe("40");
    expect(refused.headers.get("ratelimit-policy")).toBe(`"read";q=2;w=60`);
    expect(refused.headers.get("ratelimit")).toBe(`"read";r=0;t=40`);
    expect(refused.headers.get("x-request-id")).not.toBeNull();
  });

  test("the other budgets, /ping and /health go on while read is throttled", async () => {
    const write = await server.call("POST", "/v1/users", { key, body: { email: "someone@example.com" } });
    expect(write.status).toBeLessThan(300);
    expect(write.headers.get("ratelimit")).toBe(`"write";r=4;t=60`);
    const ping = await server.call("GET", "/v1/ping");
    expect(ping.status).toBe(200);
    expect(ping.headers.get("ratelimit")).toBeNull();
    const health = await server.call("GET", "/v1/health", { key });
    expect(health.status).toBe(200);
    expect(health.headers.get("ratelimit")).toBeNull();
    expect(health.body.rate_limit).toEqual({
      enabled: true,
      window_seconds: 60,
      ingest_per_window: null,
      read_per_window: 2,
      write_per_window: 5,
      store: "memory",
      degraded: false,
    });
    expect((await server.call("GET", `${USER}/stats`, { key })).status).toBe(429);
  });

  test("after Retry-After the budget admits again", async () => {
    const refused = await server.call("GET", `${USER}/stats`, { key });
    expect(refused.status).toBe(429);
    now += Number(refused.headers.get("retry-after")) * 1000;
    expect((await server.call("GET", `${USER}/stats`, { key })).status).toBe(404);
  });

  test("`partners limits` overrides reach the running server and /health within the TTL", async () => {
    const printed: string[] = [];
    const cli: Context = {
      out: (line) => printed.push(line),
      err: (line) => printed.push(line),
      write: async () => {},
      interactive: false,
      withStore: (work) => work(server.store),
    };
    await partnerLimits.run(["acme", "--read", "4", "--ingest", "9"], cli);
    expect(printed[0]).toBe("Rate limits of acme per window: ingest 9, read 4, write default.");
    now += 60_000 + OVERRIDES_TTL_MS;
    const health = await server.call("GET", "/v1/health", { key });
    expect(health.body.rate_limit).toMatchObject({
      ingest_per_window: 9,
      read_per_window: 4,
      write_per_window: 5,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await server.call("GET", `${USER}/stats`, { key })).status);
    expect(statuses).toEqual([404, 404, 404, 404, 429]);
    await partnerLimits.run(["acme", "--clear"], cli);
    now += OVERRIDES_TTL_MS;
    const cleared = await server.call("GET", "/v1/health", { key });
    expect(cleared.body.rate_limit).toMatchObject({
      ingest_per_window: null,
      read_per_window: 2,
      write_per_window: 5,
    });
    const refused = await server.call("GET", `${USER}/stats`, { key });
    expect(refused.headers.get("ratelimit-policy")).toBe(`"read";q=2;w=60`);
  });
});

describe("rate limits over HTTP (Redis)", () => {
  const prefix = uniqueRedisPrefix();
  afterAll(() => flushRedisPrefix(prefix));

  test("three instances sharing one Redis admit together exactly one budget", async () => {
    const env = { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_READ: "10", RATE_LIMIT_STORE: TEST_REDIS_URL };
    const first = await startTestServer(env, { redisPrefix: prefix });
    const others = [
      await startTestServer(env, { redisPrefix: prefix, database: first.database }),
      await startTestServer(env, { redisPrefix: prefix, database: first.database }),
    ];
    const instances = [first, ...others];
    try {
      const { sandbox } = await first.partner("acme");
      const statuses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (instances[i % instances.length] ?? first).call("GET", `${USER}/stats`, { key: sandbox }),
        ),
      );
      expect(statuses.filter((r) => r.status === 404).length).toBe(10);
      expect(statuses.filter((r) => r.status === 429).length).toBe(20);
      const health = await others[0]?.call("GET", "/v1/health", { key: sandbox });
      expect(health?.body.rate_limit).toMatchObject({ read_per_window: 10, store: "redis", degraded: false });
    } finally {
      for (const other of others) await other.close();
      await first.close();
    }
  });

  test("Redis down: the instance enforces the limits itself, /health says degraded, the outage is logged once", async () => {
    const events: string[] = [];
    const server = await startTestServer(
      { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_READ: "1", RATE_LIMIT_STORE: CLOSED_REDIS_URL },
      { log: (event) => events.push(event) },
    );
    try {
      const { sandbox } = await server.partner("acme");
      const statuses = [];
      for (let i = 0; i < 5; i += 1) {
        const response = await server.call("GET", `${USER}/stats`, { key: sandbox });
        statuses.push(response.status);
        expect(response.headers.get("ratelimit-policy")).toBe(`"read";q=1;w=60`);
      }
      expect(statuses).toEqual([404, 429, 429, 429, 429]);
      const health = await server.call("GET", "/v1/health", { key: sandbox });
      expect(health.status).toBe(200);
      expect(health.body.rate_limit).toMatchObject({ enabled: true, store: "redis", degraded: true });
      expect(events.filter((event) => event.startsWith("rate_limit_store"))).toEqual([
        "rate_limit_store_unavailable",
      ]);
    } finally {
      await server.close();
    }
  });
});
