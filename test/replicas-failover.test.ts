/**
 * A failover under ingest load, with real streaming replication: the service runs on a multi-host
 * DATABASE_URL with target_session_attrs=read-write over a private primary and a synchronous standby
 * (pg_basebackup), the primary is stopped at once and the standby promoted. Without a restart the
 * service must write to the new primary within 10 s, answer meanwhile only 200 or a retryable 500/503
 * in the envelope, answer nothing but 200 once it has resumed, and every batch it acknowledged must be
 * on the new primary, whole (docs/operations.md §9, contract §16).
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
  // Synchronous replication: a commit is acknowledged once the standby has it on disk.
  await primary.admin("alter system set synchronous_standby_names = '*'");
  await primary.admin("select pg_reload_conf()");
  await untilStreaming(primary, "sync");
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await standby?.destroy();
  await primary?.destroy();
}, 30_000);

test("a promotion under ingest load: the service follows within 10 s and loses no acknowledged batch", async () => {
  const outcome = await promotionUnderLoad(primary, standby, database, "kept", (started) => {
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
