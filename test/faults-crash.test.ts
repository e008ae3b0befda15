/**
 * The service killed (-9) while clients send media batches, three times over: what PostgreSQL holds
 * afterwards must be what the clients were told. Every acknowledged batch is stored whole, no batch is
 * stored in part, and every history row's counts and stored media list agree with the media rows.
 * On a PostgreSQL cluster of this file's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { probeUser, timeToRecover } from "./support/faultProbe.ts";
import { type BatchRecord, createUsers, Traffic } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { type ServiceProcess, startService } from "./support/serviceProcess.ts";
import { storedProblems } from "./support/storedProblems.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess | null = null;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  database = await prepareDatabase(cluster);
}, 30_000);

afterAll(async () => {
  await service?.stop();
  await cluster?.destroy();
}, 30_000);

const ROUNDS = 3;

test("kill -9 mid-ingest: nothing acknowledged is lost, no batch is half stored, counts and lists agree", async () => {
  const batches: BatchRecord[] = [];
  const kills: string[] = [];
  let cutShort = 0;
  for (let round = 0; round < ROUNDS; round++) {
    service = await startService({ DATABASE_URL: database.url });
    const current = service;
    const users = await createUsers(current, database.key, `crash${round}-`, 4);
    const traffic = new Traffic(() => current.baseUrl, database.key);
    traffic.ingest(users, `crash${round}`);
    try {
      // Each round kills at a different point of the clients' flow.
      await traffic.untilSucceeded(15 + round * 20);
      current.signal("SIGKILL");
      kills.push(`round ${round}: exit ${await current.exited}`);
    } finally {
      await traffic.stop();
    }
    batches.push(...traffic.batches);
    cutShort += traffic.batches.filter((b) => b.outcome.kind === "dropped").length;
  }

  // A service started afterwards serves every route on what the killed ones left.
  service = await startService({ DATABASE_URL: database.url });
  const probe = await probeUser(service, database.key, "crash-probe");
  const recovery = await timeToRecover(service, database.key, probe, performance.now());
  const acknowledged = batches.filter((b) => b.outcome.kind === "answer" && b.outcome.status === 200);
  console.log(
    `${batches.length} batches over ${ROUNDS} kills: ${acknowledged.length} acknowledged, ${cutShort} cut short by the kill`,
  );

  expect({
    kills,
    // The kills hit batches in flight, or the test proved nothing about half batches.
    batchesCutShort: cutShort > 0,
    stored: await storedProblems(database.url, batches),
    restarted: recovery.ms === null ? `not serving: ${recovery.lastFailure}` : "serving every route",
  }).toEqual({
    kills: Array.from({ length: ROUNDS }, (_, round) => `round ${round}: exit 137`),
    batchesCutShort: true,
    stored: [],
    restarted: "serving every route",
  });
}, 60_000);
