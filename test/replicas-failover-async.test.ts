/**
 * The failover of test/replicas-failover.test.ts over asynchronous replication, PostgreSQL's default and
 * most operators' first setup: the standby may lack the last commits the primary acknowledged, so a batch
 * acknowledged just before the promotion may be gone, but whole; everything else holds as with a
 * synchronous standby: the service follows within 10 s without a restart, answers meanwhile only 200 or
 * a retryable 500/503, then only 200, and nothing stored is half a batch or miscounted (docs/operations.md
 * §9, "What a failover can lose").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { promotionUnderLoad, untilStreaming } from "./support/failover.ts";
import { type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { hostOf } from "./support/replication.ts";
import type { ServiceProcess } from "./support/serviceProcess.ts";

let primary: PrivateCluster;
let standby: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess | null = null;

beforeAll(async () => {
  primary = await createPrivateCluster();
  database = await prepareDatabase(primary);
  standby = await createPrivateCluster(primary);
  await untilStreaming(primary, "async");
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await standby?.destroy();
  await primary?.destroy();
}, 30_000);

test("a promotion of an asynchronous standby under ingest load: followed within 10 s, nothing half stored", async () => {
  const outcome = await promotionUnderLoad(primary, standby, database, "may be lost", (started) => {
    service = started;
  });
  expect(outcome).toEqual({
    process: "running",
    followed: "within 10 s",
    unexpected: [],
    afterResume: [],
    writes: hostOf(standby),
    stored: [],
  });
}, 90_000);
