/**
 * A failover under ingest load, with real streaming replication: the service runs on a multi-host
 * DATABASE_URL with target_session_attrs=read-write over a private primary and a synchronous standby
 * (pg_basebackup), the primary is stopped at once and the standby promoted. Without a restart the
 * service must write to the new primary within 10 s, answer meanwhile only 200 or a retryable 500/503
 * in the envelope, answer nothing but 200 once it has resumed, and every batch it acknowledged must be
 * on the new primary, whole (docs/operations.md §9, contract §16).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DATABASE, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, Traffic } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { hostOf, servedBy } from "./support/replication.ts";
import { type ServiceProcess, startService } from "./support/serviceProcess.ts";
import { storedProblems } from "./support/storedProblems.ts";

/** contract §16: the new primary is found within 10 s of the promotion. */
const FOLLOW_LIMIT_MS = 10_000;

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
  const deadline = performance.now() + 10_000;
  for (;;) {
    const rows = await primary.admin("select 1 from pg_stat_replication where sync_state = 'sync'");
    if (rows.length > 0) break;
    if (performance.now() > deadline) throw new Error("the standby never became synchronous");
    await Bun.sleep(100);
  }
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await standby?.destroy();
  await primary?.destroy();
}, 30_000);

test("a promotion under ingest load: the service follows within 10 s and loses no acknowledged batch", async () => {
  const url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${DATABASE}?target_session_attrs=read-write`;
  service = await startService({ DATABASE_URL: url });
  const current = service;
  await servedBy(current, "writes", hostOf(primary));
  const writers = await createUsers(current, database.key, "failover-w", 4);
  const readers = await createUsers(current, database.key, "failover-r", 2);
  const traffic = new Traffic(() => current.baseUrl, database.key);
  traffic.ingest(writers, "failover");
  traffic.read(readers);
  let promotedAt = 0;
  let resumedAt: number | null = null;
  try {
    await traffic.untilSucceeded(40);
    await primary.stop("immediate");
    await standby.promote();
    promotedAt = performance.now();
    // Resumed: the first batch sent after the promotion that was acknowledged, when its answer came.
    const resumption = () => {
      const answered = traffic.acknowledged
        .filter((batch) => batch.outcome.at >= promotedAt)
        .map((batch) => batch.outcome.at + batch.outcome.ms);
      return answered.length === 0 ? null : Math.min(...answered);
    };
    while (resumption() === null && performance.now() < promotedAt + FOLLOW_LIMIT_MS + 5_000) {
      await Bun.sleep(20);
    }
    resumedAt = resumption();
    // Resumed means for good: the clients go on for a while, every answer now a 200.
    await Bun.sleep(5_000);
  } finally {
    await traffic.stop();
  }
  const followMs = resumedAt === null ? null : Math.round(resumedAt - promotedAt);
  const afterResume = resumedAt === null ? [] : traffic.failedSince(resumedAt);
  console.log(
    `failover: ${traffic.batches.length} batches (${traffic.acknowledged.length} acknowledged), ` +
      `${traffic.reads.length} reads; first batch acknowledged ${followMs ?? "never"} ms after the promotion`,
  );
  expect({
    process: current.exitCode() === null ? "running" : current.describe(),
    followed: followMs !== null && followMs <= FOLLOW_LIMIT_MS ? "within 10 s" : `after ${followMs} ms`,
    unexpected: traffic.unexpected().slice(0, 4),
    afterResume: afterResume.slice(0, 4),
    writes: await servedBy(current, "writes", hostOf(standby)).then(
      () => hostOf(standby),
      (error: Error) => error.message,
    ),
    stored: await storedProblems(standby.url(DATABASE), traffic.batches),
  }).toEqual({
    process: "running",
    followed: "within 10 s",
    unexpected: [],
    afterResume: [],
    writes: hostOf(standby),
    stored: [],
  });
}, 90_000);
