/**
 * Shared rate limits (RATE_LIMIT_STORE=redis://…) while Redis goes away and comes back. What the code
 * documents (src/limits/redisWindow.ts): requests never wait on a Redis that is down; each instance
 * counts on its own meanwhile, so the limits still hold per instance; /health says `degraded`; once
 * Redis is back the instance uses it again. On a redis-server and a PostgreSQL cluster of this
 * file's own (the shared ones serve other tests).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { addPartner, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, describeOutcome, Traffic } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { createPrivateRedis, type PrivateRedis } from "./support/privateRedis.ts";
import { call, type ServiceProcess, startService } from "./support/serviceProcess.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let redis: PrivateRedis;
let service: ServiceProcess;
/** A key of a partner allowed 5 reads a window, to see the limit hold while Redis is away. */
let tightKey: string;

const TIGHT_READS = 5;
/** The service's default Redis key prefix (src/limits/index.ts). */
const SERVICE_KEYS = "rollcall:ratelimit:*";

beforeAll(async () => {
  cluster = await createPrivateCluster();
  database = await prepareDatabase(cluster);
  tightKey = await addPartner(database.url, "tight", TIGHT_READS);
  redis = await createPrivateRedis();
  service = await startService({
    DATABASE_URL: database.url,
    RATE_LIMIT_ENABLED: "true",
    RATE_LIMIT_STORE: redis.url,
    // Limits on every budget, so every request is counted in Redis; high enough never to refuse.
    RATE_LIMIT_INGEST: "100000",
    RATE_LIMIT_READ: "100000",
    RATE_LIMIT_WRITE: "100000",
    // While Redis is away each serving thread counts alone (docs/operations.md §5): one thread makes
    // the per-instance count below exact.
    REQUEST_THREADS: "1",
  });
}, 30_000);

afterAll(async () => {
  await service?.stop();
  await redis?.destroy();
  await cluster?.destroy();
}, 30_000);

async function degraded(): Promise<boolean | string> {
  const outcome = await call(
    service.baseUrl,
    { method: "GET", path: "/v1/health", key: database.key },
    5_000,
  );
  if (outcome.kind !== "answer" || outcome.status !== 200) return describeOutcome(outcome);
  return (outcome.body as { rate_limit?: { degraded?: boolean } }).rate_limit?.degraded ?? "no rate_limit";
}

/** Milliseconds until /health reports `degraded` as `wanted`, or null if not within `timeoutMs`. */
async function untilDegraded(wanted: boolean, timeoutMs: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if ((await degraded()) === wanted) return Math.round(performance.now() - started);
    await Bun.sleep(50);
  }
  return null;
}

test("Redis killed and started again: the service keeps answering, counts per instance meanwhile, then uses Redis again", async () => {
  const writers = await createUsers(service, database.key, "redis-w", 2);
  const readers = await createUsers(service, database.key, "redis-r", 2);
  const [tightUser = ""] = await createUsers(service, tightKey, "redis-tight", 1);
  const before = { degraded: await degraded(), keys: (await redis.keys(SERVICE_KEYS)).length > 0 };

  const traffic = new Traffic(() => service.baseUrl, database.key);
  traffic.ingest(writers, "redis");
  traffic.read(readers);
  let degradedAfterMs: number | null = null;
  const tightStatuses: (number | string)[] = [];
  let recoveredAfterMs: number | null = null;
  let keysAfter = false;
  try {
    await traffic.untilSucceeded(20);
    await redis.kill();
    degradedAfterMs = await untilDegraded(true, 5_000);
    await traffic.untilSucceeded(20, 5_000);
    // The partner's 5 reads a window still hold, counted by this instance alone.
    for (let i = 0; i < TIGHT_READS + 2; i++) {
      const outcome = await call(service.baseUrl, {
        method: "GET",
        path: `/v1/users/${tightUser}/events`,
        key: tightKey,
      });
      tightStatuses.push(outcome.kind === "answer" ? outcome.status : outcome.kind);
    }
    // Long enough an outage for the client's reconnection backoff to reach its 2 s cap.
    await Bun.sleep(3_000);
    await redis.start();
    recoveredAfterMs = await untilDegraded(false, 10_000);
    // The Redis that came back is empty: keys there now are counts the service has made since.
    await traffic.untilSucceeded(10, 5_000);
    keysAfter = (await redis.keys(SERVICE_KEYS)).length > 0;
  } finally {
    await traffic.stop();
  }

  const notOk = [...traffic.batches, ...traffic.reads]
    .map((r) => r.outcome)
    .filter((o) => o.kind !== "answer" || o.status !== 200 || o.ms > 2_000)
    .map(describeOutcome);
  console.log(
    `redis: ${traffic.batches.length} batches and ${traffic.reads.length} reads; degraded after ${degradedAfterMs} ms, ` +
      `back after ${recoveredAfterMs} ms`,
  );
  expect({
    before,
    // Requests never wait on a Redis that is down (a command times out after 500 ms).
    clients: notOk.length === 0 ? "every answer 200 within 2 s" : notOk.slice(0, 5),
    degradedWithin5s: degradedAfterMs !== null,
    tightStatuses,
    recoveredWithin5s: recoveredAfterMs !== null && recoveredAfterMs <= 5_000 ? true : recoveredAfterMs,
    redisUsedAgain: keysAfter,
    process: service.exitCode() === null ? "running" : service.describe(),
  }).toEqual({
    before: { degraded: false, keys: true },
    clients: "every answer 200 within 2 s",
    degradedWithin5s: true,
    tightStatuses: [...Array<number>(TIGHT_READS).fill(200), 429, 429],
    recoveredWithin5s: true,
    redisUsedAgain: true,
    process: "running",
  });
}, 40_000);
