/**
 * A failover under ingest load, with real streaming replication: the service runs on a multi-host
 * DATABASE_URL with target_session_attrs=read-write over a private primary and a standby made with
 * pg_basebackup; the primary is stopped at once and the standby promoted. Without a restart the service
 * must write to the new primary within 10 s, answer meanwhile only 200 or a retryable 500/503 in the
 * envelope, answer nothing but 200 once it has resumed, and store no batch in part and no count off
 * (docs/operations.md §9, contract §16). With a synchronous standby every acknowledged batch is on the
 * new primary; with an asynchronous one, PostgreSQL's default, one acknowledged just before the
 * promotion may be gone, whole.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { promotionUnderLoad, untilStreaming } from "./support/failover.ts";
import { type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { hostOf } from "./support/replication.ts";
import type { ServiceProcess } from "./support/serviceProcess.ts";

function failoverOver(replication: "sync" | "async", acknowledged: "kept" | "may be lost") {
  let primary: PrivateCluster;
  let standby: PrivateCluster;
  let database: FaultDatabase;
  let service: ServiceProcess | null = null;

  beforeAll(async () => {
    primary = await createPrivateCluster();
    database = await prepareDatabase(primary);
    standby = await createPrivateCluster(primary);
    if (replication === "sync") {
      // A commit is acknowledged once the standby has it on disk.
      await primary.admin("alter system set synchronous_standby_names = '*'");
      await primary.admin("select pg_reload_conf()");
    }
    await untilStreaming(primary, replication);
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await standby?.destroy();
    await primary?.destroy();
  }, 30_000);

  test("a promotion under ingest load: followed within 10 s, nothing half stored, only 200s after", async () => {
    const outcome = await promotionUnderLoad(primary, standby, database, acknowledged, (started) => {
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
}

describe("a synchronous standby: no acknowledged batch lost", () => failoverOver("sync", "kept"));
describe("an asynchronous standby: acknowledged batches lost whole at most", () =>
  failoverOver("async", "may be lost"));
