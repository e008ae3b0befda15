/**
 * History, stats and exports read on a hot standby (DATABASE_READ_URL, docs/operations.md §9) with real
 * streaming replication: a private primary and a standby copied from it with pg_basebackup. A user's
 * reads right after their own batch, deletion, hide or erasure never show the state before it, even
 * with the standby's replay paused; a standby past the lag bound is skipped; a standby stopped under
 * load, or frozen, loses no read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { batchItems, DATABASE, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, Traffic } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { freePort } from "./support/processes.ts";
import {
  api,
  hostOf,
  queryOn,
  readsServedBy,
  replayed,
  serviceWithStandby,
  standbyReadCounts,
  userView,
} from "./support/replication.ts";
import type { ServiceProcess } from "./support/serviceProcess.ts";

let primary: PrivateCluster;
let standby: PrivateCluster;
let database: FaultDatabase;
let standbyUrl: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  primary = await createPrivateCluster();
  database = await prepareDatabase(primary);
  standby = await createPrivateCluster(primary);
  standbyUrl = standby.url(DATABASE);
}, 60_000);

afterAll(async () => {
  for (const service of services) await service.stop();
  await standby?.destroy();
  await primary?.destroy();
}, 30_000);

async function started(env: Record<string, string> = {}) {
  const metricsPort = await freePort();
  const service = await serviceWithStandby(database.url, standbyUrl, metricsPort, env);
  services.push(service);
  await readsServedBy(service, hostOf(standby));
  return { service, metricsPort };
}

async function post(service: ServiceProcess, path: string, body?: unknown) {
  const answer = await api(service, database.key, "POST", path, body);
  if (answer.status !== 200) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe("reads on a hot standby", () => {
  test("a user's reads and export right after their own writes are never stale, with the standby's replay paused", async () => {
    // A lag bound the paused standby stays within: only the per-user fence keeps these reads fresh.
    const { service, metricsPort } = await started({ DATABASE_READ_MAX_LAG_SECONDS: "3600" });
    const [writer, bystander] = await createUsers(service, database.key, "ryw", 2);
    if (writer === undefined || bystander === undefined) throw new Error("no users");
    await post(service, `/users/${writer}/media`, { media: batchItems("ryw-a1") });
    await post(service, `/users/${bystander}/media`, { media: batchItems("ryw-b1") });
    await replayed(primary, standby);
    const before = await standbyReadCounts(metricsPort);
    const bystanderView = await userView(service, database.key, bystander);
    expect((await standbyReadCounts(metricsPort)).standby).toBe(before.standby + 3);

    await standby.admin("select pg_wal_replay_pause()");
    try {
      await post(service, `/users/${writer}/media`, { media: batchItems("ryw-a2") });
      // The standby still holds the user as before the batch: a read there would be stale.
      const [onStandby] = await queryOn<{ kept: number }>(
        standbyUrl,
        "select count(*)::int as kept from media where user_id = $1",
        [writer],
      );
      expect(onStandby?.kept).toBe(20);
      expect(await userView(service, database.key, writer)).toEqual({
        statuses: [200, 200, 200],
        history: { 100: 14, 101: 14, 102: 12 },
        statsMedia: 40,
        exported: [40, []],
      });

      await post(service, `/users/${writer}/events/100/hide`);
      expect(await userView(service, database.key, writer)).toEqual({
        statuses: [200, 200, 200],
        history: { 101: 14, 102: 12 },
        statsMedia: 26,
        exported: [40, [100]],
      });

      await post(service, `/users/${writer}/media/delete`, { ids: ["ryw-a1.1", "ryw-a2.2"] });
      expect(await userView(service, database.key, writer)).toEqual({
        statuses: [200, 200, 200],
        history: { 101: 13, 102: 11 },
        statsMedia: 24,
        exported: [38, [100]],
      });

      // A user who wrote nothing since the standby stopped replaying still reads there.
      const counted = await standbyReadCounts(metricsPort);
      expect(await userView(service, database.key, bystander)).toEqual(bystanderView);
      expect((await standbyReadCounts(metricsPort)).standby).toBe(counted.standby + 3);

      expect((await api(service, database.key, "DELETE", `/users/${writer}`)).status).toBe(200);
      expect((await userView(service, database.key, writer)).statuses).toEqual([404, 404, 404]);
    } finally {
      await standby.admin("select pg_wal_replay_resume()");
    }
  }, 60_000);

  test("a standby lagging past DATABASE_READ_MAX_LAG_SECONDS is skipped, and used again once it catches up", async () => {
    const { service, metricsPort } = await started({ DATABASE_READ_MAX_LAG_SECONDS: "1" });
    const [writer, reader] = await createUsers(service, database.key, "lag", 2);
    if (writer === undefined || reader === undefined) throw new Error("no users");
    await post(service, `/users/${reader}/media`, { media: batchItems("lag-r1") });
    await replayed(primary, standby);
    await standby.admin("select pg_wal_replay_pause()");
    try {
      await post(service, `/users/${writer}/media`, { media: batchItems("lag-w1") });
      await readsServedBy(service, "primary");
      const before = await standbyReadCounts(metricsPort);
      const view = await userView(service, database.key, reader);
      expect(view.statuses).toEqual([200, 200, 200]);
      expect([view.statsMedia, view.exported]).toEqual([20, [20, []]]);
      const after = await standbyReadCounts(metricsPort);
      expect(after.standby).toBe(before.standby);
      expect(after.skipped + after.behind).toBe(before.skipped + before.behind + 3);
    } finally {
      await standby.admin("select pg_wal_replay_resume()");
    }
    await readsServedBy(service, hostOf(standby));
  }, 60_000);

  test("a standby stopped under reads and ingest loses no read", async () => {
    const { service, metricsPort } = await started();
    const readers = await createUsers(service, database.key, "stop-r", 4);
    const writers = await createUsers(service, database.key, "stop-w", 2);
    for (const [i, reader] of readers.entries()) {
      await post(service, `/users/${reader}/media`, { media: batchItems(`stop-seed${i}`) });
    }
    await replayed(primary, standby);
    const traffic = new Traffic(() => service.baseUrl, database.key);
    traffic.read(readers);
    traffic.ingest(writers, "stop");
    try {
      await traffic.untilSucceeded(40);
      await standby.stop("immediate");
      await readsServedBy(service, "primary");
      await traffic.untilSucceeded(40);
      await standby.start();
      await readsServedBy(service, hostOf(standby));
      await traffic.untilSucceeded(40);
    } finally {
      await traffic.stop();
    }
    const failed = traffic.failedSince(0);
    expect({ failed: failed.slice(0, 4), count: failed.length }).toEqual({ failed: [], count: 0 });
    const counts = await standbyReadCounts(metricsPort);
    console.log(`standby stopped: ${traffic.reads.length} reads, ${JSON.stringify(counts)}`);
    expect(counts.standby).toBeGreaterThan(0);
    expect(sum(counts)).toBeGreaterThanOrEqual(traffic.reads.length);
  }, 90_000);

  test("a standby that stops answering (its processes frozen) costs reads and exports time, never an answer", async () => {
    const { service, metricsPort } = await started();
    const readers = await createUsers(service, database.key, "frozen-r", 3);
    for (const [i, reader] of readers.entries()) {
      await post(service, `/users/${reader}/media`, { media: batchItems(`frozen-seed${i}`) });
    }
    await replayed(primary, standby);
    const before = await standbyReadCounts(metricsPort);
    const traffic = new Traffic(() => service.baseUrl, database.key);
    traffic.read(readers);
    try {
      await traffic.untilSucceeded(30);
      standby.signalAll("SIGSTOP");
      try {
        // Sent before the watch has seen the standby go: it opens there, and finds the primary in time.
        const exported = await api(service, database.key, "GET", `/users/${readers[0]}/export`);
        expect([exported.status, (exported.body as { media?: unknown[] }).media?.length]).toEqual([200, 20]);
        await readsServedBy(service, "primary");
        await traffic.untilSucceeded(30);
      } finally {
        standby.signalAll("SIGCONT");
      }
      await readsServedBy(service, hostOf(standby));
      await traffic.untilSucceeded(30);
    } finally {
      await traffic.stop();
    }
    const failed = traffic.failedSince(0);
    expect({ failed: failed.slice(0, 4), count: failed.length }).toEqual({ failed: [], count: 0 });
    const counts = await standbyReadCounts(metricsPort);
    console.log(`standby frozen: ${traffic.reads.length} reads, ${JSON.stringify(counts)}`);
    // Reads were waiting on the standby when it froze, and the primary answered them.
    expect(counts.failed).toBeGreaterThan(before.failed);
  }, 90_000);
});
