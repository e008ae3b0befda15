/**
 * The TypeScript client's retries against a real rollcall, as the specification prescribes them (§7):
 * a 429 after its Retry-After, a dropped connection and a 5xx with exponential backoff and jitter.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  createRollcallClient,
  type RetryEvent,
  type RetryPolicy,
  RollcallError,
} from "../clients/typescript/src/index.ts";
import { type ConnectionFate, startFlakyProxy } from "./support/flakyProxy.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const WINDOW_SECONDS = 2;

let server: TestServer;
let key: string;
let userId: string;

beforeAll(async () => {
  // One read per window: a second read right after the first is refused with a Retry-After of 1 or 2.
  server = await startTestServer({
    RATE_LIMIT_ENABLED: "true",
    RATE_LIMIT_READ: "1",
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  });
  key = (await server.partner("acme")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "retry@example.com" } })).body
    .user_id;
});

afterAll(async () => {
  await server.close();
});

/** A client of `baseUrl` that records its retries and the statuses of its tries. */
function clientOf(baseUrl: string, retry: Partial<RetryPolicy> = {}) {
  const retries: RetryEvent[] = [];
  const statuses: number[] = [];
  const client = createRollcallClient({
    baseUrl: `${baseUrl}/v1`,
    apiKey: key,
    retry: { baseDelayMs: 20, ...retry },
    onRetry: (event) => retries.push(event),
    fetch: async (request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    },
  });
  return { client, retries, statuses };
}

async function withProxy<T>(fates: ConnectionFate[], use: (baseUrl: string) => Promise<T>) {
  const proxy = await startFlakyProxy(server.baseUrl, fates);
  try {
    return { result: await use(proxy.baseUrl), connections: proxy.connections() };
  } finally {
    await proxy.close();
  }
}

describe("429", () => {
  test("waits out Retry-After, then answers", async () => {
    const { client, retries, statuses } = clientOf(server.baseUrl);
    await client.stats(userId);
    const stats = await client.stats(userId);
    expect(stats.has_synced).toBe(false);
    expect(statuses).toEqual([200, 429, 200]);
    expect(retries.map(({ retry, status }) => ({ retry, status }))).toEqual([{ retry: 1, status: 429 }]);
    // The wait is the Retry-After the service sent, in whole seconds.
    expect([1000, 2000]).toContain(retries[0]?.delayMs ?? 0);
  });

  test("fails with rate_limited when retries are off, or when the wait asked is longer than allowed", async () => {
    for (const retry of [{ maxRetries: 0 }, { maxRetryAfterSeconds: 0 }]) {
      const { client, statuses } = clientOf(server.baseUrl, retry);
      await Bun.sleep(WINDOW_SECONDS * 1000);
      await client.stats(userId);
      const failure = await client.stats(userId).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(RollcallError);
      expect([(failure as RollcallError).status, (failure as RollcallError).code]).toEqual([
        429,
        "rate_limited",
      ]);
      expect(statuses).toEqual([200, 429]);
    }
  });
});

describe("a dropped connection", () => {
  test("is tried again after a backoff, a body sent again whole", async () => {
    const retries: RetryEvent[] = [];
    const { result, connections } = await withProxy(["drop"], (baseUrl) =>
      createRollcallClient({
        baseUrl: `${baseUrl}/v1`,
        apiKey: key,
        retry: { baseDelayMs: 20 },
        onRetry: (event) => retries.push(event),
      }).createUser({ email: "dropped@example.com", first_name: "Ana" }),
    );
    expect(result.existing).toBe(false);
    expect(connections).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.status).toBeNull();
    expect(retries[0]?.error).toBeInstanceOf(Error);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(20);
    // The retried creation is the one user: a retry of POST /users is safe (idempotent on the email).
    const again = await clientOf(server.baseUrl).client.createUser({ email: "dropped@example.com" });
    expect([again.user_id, again.existing]).toEqual([result.user_id, true]);
  });

  test("fails with the connection's error once the retries are spent", async () => {
    const retries: RetryEvent[] = [];
    const { result, connections } = await withProxy(["drop", "drop", "drop"], (baseUrl) =>
      createRollcallClient({
        baseUrl: `${baseUrl}/v1`,
        apiKey: key,
        retry: { maxRetries: 2, baseDelayMs: 10 },
        onRetry: (event) => retries.push(event),
      })
        .ping()
        .catch((error: unknown) => error),
    );
    expect(result).toBeInstanceOf(Error);
    expect(result).not.toBeInstanceOf(RollcallError);
    expect([connections, retries.length]).toEqual([3, 2]);
  });
});

describe("5xx", () => {
  test("is tried again with exponential backoff and jitter, then answers", async () => {
    const retries: RetryEvent[] = [];
    const { result, connections } = await withProxy(["unavailable", "unavailable"], (baseUrl) =>
      createRollcallClient({
        baseUrl: `${baseUrl}/v1`,
        apiKey: key,
        retry: { baseDelayMs: 40, maxDelayMs: 60 },
        onRetry: (event) => retries.push(event),
      }).ping(),
    );
    expect(result).toEqual({ status: "ok", version: "v1" });
    expect(connections).toBe(3);
    expect(retries.map(({ retry, status }) => [retry, status])).toEqual([
      [1, 503],
      [2, 503],
    ]);
    // Each wait is drawn from 0 to its ceiling: 40 ms, then 80 ms capped at 60.
    const ceilings = [40, 60];
    expect(retries.map(({ delayMs }, i) => delayMs >= 0 && delayMs <= (ceilings[i] ?? 0))).toEqual([
      true,
      true,
    ]);
  });

  test("fails with the status once the retries are spent", async () => {
    const { result } = await withProxy(["unavailable", "unavailable"], (baseUrl) =>
      createRollcallClient({
        baseUrl: `${baseUrl}/v1`,
        apiKey: key,
        retry: { maxRetries: 1, baseDelayMs: 10 },
      })
        .ping()
        .catch((error: unknown) => error),
    );
    expect(result).toBeInstanceOf(RollcallError);
    expect([(result as RollcallError).status, (result as RollcallError).code]).toEqual([503, "http_503"]);
  });
});
