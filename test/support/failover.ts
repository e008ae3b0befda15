import { DATABASE, type FaultDatabase } from "./faultFixture.ts";
import { createUsers, Traffic } from "./faultTraffic.ts";
import type { PrivateCluster } from "./privateCluster.ts";
import { hostOf, servedBy } from "./replication.ts";
import { type ServiceProcess, startService } from "./serviceProcess.ts";
import { storedProblems } from "./storedProblems.ts";

/** contract §16: the new primary is found within 10 s of the promotion. */
const FOLLOW_LIMIT_MS = 10_000;

/** Waits until the primary has a standby in `state` ("sync" or "async") streaming from it. */
export async function untilStreaming(primary: PrivateCluster, state: "sync" | "async"): Promise<void> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const rows = await primary.admin(`select 1 from pg_stat_replication where sync_state = '${state}'`);
    if (rows.length > 0) return;
    if (performance.now() > deadline) throw new Error(`no ${state} standby streams from the primary`);
    await Bun.sleep(100);
  }
}

/** What a promotion under load showed, in a shape a test compares whole. */
export type FailoverOutcome = {
  process: string;
  followed: string;
  unexpected: string[];
  afterResume: string[];
  writes: string;
  stored: string[];
};

/**
 * A failover under ingest and read load (docs/operations.md §9, contract §16): the service runs on a
 * multi-host DATABASE_URL with target_session_attrs=read-write over `primary` and `standby`; the primary
 * is stopped at once and the standby promoted. Meanwhile answers must be 200 or a retryable 500/503 in
 * the envelope; within 10 s a batch is acknowledged again, and from then on every answer is a 200.
 */
export async function promotionUnderLoad(
  primary: PrivateCluster,
  standby: PrivateCluster,
  database: FaultDatabase,
  acknowledged: "kept" | "may be lost",
  started: (service: ServiceProcess) => void,
): Promise<FailoverOutcome> {
  const url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/${DATABASE}?target_session_attrs=read-write`;
  const service = await startService({ DATABASE_URL: url });
  started(service);
  await servedBy(service, "writes", hostOf(primary));
  const writers = await createUsers(service, database.key, "failover-w", 4);
  const readers = await createUsers(service, database.key, "failover-r", 2);
  const traffic = new Traffic(() => service.baseUrl, database.key);
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
  return {
    process: service.exitCode() === null ? "running" : service.describe(),
    followed: followMs !== null && followMs <= FOLLOW_LIMIT_MS ? "within 10 s" : `after ${followMs} ms`,
    unexpected: traffic.unexpected().slice(0, 4),
    afterResume: afterResume.slice(0, 4),
    writes: await servedBy(service, "writes", hostOf(standby)).then(
      () => hostOf(standby),
      (error: Error) => error.message,
    ),
    stored: await storedProblems(standby.url(DATABASE), traffic.batches, acknowledged),
  };
}
