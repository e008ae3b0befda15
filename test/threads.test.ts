/**
 * The service on two request threads, run as a process: both threads serve the one port, budgets
 * stay exact across them, a catalog swap during load fails no request, and a thread that dies is
 * replaced while the other keeps serving, its batch stored whole or not at all (docs/architecture.md §8).
 * On a PostgreSQL cluster of this file's own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DRILL_ENTRY } from "./support/faultDrillService.ts";
import { addPartner, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, Traffic } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { call, type ServiceProcess, startService } from "./support/serviceProcess.ts";
import { storedProblems } from "./support/storedProblems.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess;
let limitedKey: string;
const READ_LIMIT = 5;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  database = await prepareDatabase(cluster);
  limitedKey = await addPartner(database.url, "limited", READ_LIMIT);
  service = await startService(
    {
      DATABASE_URL: database.url,
      REQUEST_THREADS: "2",
      RATE_LIMIT_ENABLED: "true",
      CATALOG_POLL_SECONDS: "1",
      // SIGUSR2 ends one request thread: the drill of the test entry, which starts src/main.ts.
      DRILL_THREAD_SIGNAL: "true",
      LOG_LEVEL: "info",
    },
    { entry: DRILL_ENTRY },
  );
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await cluster?.destroy();
}, 30_000);

/** A request on a connection of its own, so the kernel may hand it to either thread. */
const fresh = (path: string, key: string) =>
  fetch(`${service.baseUrl}${path}`, { headers: { "x-partner-api-key": key, connection: "close" } });

/** Which threads wrote access-log lines so far. */
function threadsSeen(): Set<number> {
  const seen = new Set<number>();
  for (const line of service.stderrLines()) {
    const match = /"thread":(\d+).*"event":"request"|"event":"request".*"thread":(\d+)/.exec(line);
    const thread = match?.[1] ?? match?.[2];
    if (thread !== undefined) seen.add(Number(thread));
  }
  return seen;
}

describe("two request threads", () => {
  test("both serve the one port", async () => {
    for (let i = 0; i < 60 && threadsSeen().size < 2; i++) {
      expect((await fresh("/v1/health", database.key)).status).toBe(200);
    }
    expect([...threadsSeen()].sort()).toEqual([1, 2]);
  }, 30_000);

  test("a budget counted in memory is exact across threads: the N+1th request is 429 whichever takes it", async () => {
    const [userId] = await createUsers(service, database.key, "limited-", 1);
    const statuses = await Promise.all(
      Array.from({ length: 4 * READ_LIMIT }, () => fresh(`/v1/users/${userId}/stats`, limitedKey)),
    );
    const counts = statuses.reduce<Record<number, number>>((all, { status }) => {
      all[status] = (all[status] ?? 0) + 1;
      return all;
    }, {});
    // The user belongs to acme: "limited" sees 404 for it, which spends its read budget all the same.
    expect(counts).toEqual({ 404: READ_LIMIT, 429: 3 * READ_LIMIT });
  }, 30_000);

  test("catalog swaps under load fail no request, and every thread moves to the new generation", async () => {
    const users = await createUsers(service, database.key, "swap-", 4);
    const traffic = new Traffic(() => service.baseUrl, database.key);
    traffic.ingest(users, "swap");
    traffic.read(users);
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await traffic.untilSucceeded(20);
      for (let swap = 0; swap < 2; swap++) {
        await admin`update catalog_state set version = version + 1`;
        const live = (generation: number) =>
          service
            .stderrLines()
            .some((line) => line.includes(`"event":"catalog_generation_live","generation":${generation}`));
        const deadline = performance.now() + 15_000;
        while (!live(swap + 2) && performance.now() < deadline) await Bun.sleep(100);
        expect(live(swap + 2)).toBe(true);
      }
      await traffic.untilSucceeded(traffic.acknowledged.length + 20);
    } finally {
      await traffic.stop();
      await admin.end();
    }
    expect(traffic.unexpected()).toEqual([]);
    expect(traffic.failedSince(0)).toEqual([]);
    expect(await storedProblems(database.url, traffic.batches)).toEqual([]);
  }, 60_000);

  test("a request thread that dies is replaced; the other keeps serving; its batch is whole or absent", async () => {
    const users = await createUsers(service, database.key, "kill-", 4);
    const traffic = new Traffic(() => service.baseUrl, database.key);
    traffic.ingest(users, "kill");
    try {
      await traffic.untilSucceeded(20);
      service.signal("SIGUSR2");
      const replaced = () =>
        service.stderrLines().some((line) => line.includes('"event":"request_thread_replaced"'));
      const deadline = performance.now() + 15_000;
      while (!replaced() && performance.now() < deadline) await Bun.sleep(50);
      expect(replaced()).toBe(true);
      await traffic.untilSucceeded(traffic.acknowledged.length + 40);
    } finally {
      await traffic.stop();
    }
    expect(service.exitCode()).toBeNull();
    expect(await storedProblems(database.url, traffic.batches)).toEqual([]);
    const after = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(service.baseUrl, { method: "GET", path: "/v1/health", key: database.key }),
      ),
    );
    expect(after.map((outcome) => outcome.kind === "answer" && outcome.status)).toEqual(Array(10).fill(200));
  }, 60_000);
});
