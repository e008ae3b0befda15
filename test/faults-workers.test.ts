/**
 * Matching worker threads that exit (WORKERS=2, and DRILL_WORKER_EXIT=3 for the test entry
 * faultDrillService.ts, which starts src/main.ts: the first three match tasks end their thread). A batch
 * whose task fails on its retry too is answered 500 in the envelope, never a dropped connection or a
 * process exit, and stores nothing; the threads are replaced, and every later batch, the failed ones
 * sent again included, is answered 200 with the matches the catalog gives.
 * On a PostgreSQL cluster of this file's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseConfig } from "../src/config.ts";
import { DRILL_ENTRY, DrillError, drillsOf } from "./support/faultDrillService.ts";
import { batchItems, expectedEventOf, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { type BatchRecord, createUsers, describeOutcome } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { call, isEnvelope, type ServiceProcess, startService } from "./support/serviceProcess.ts";
import { storedProblems } from "./support/storedProblems.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess;

const EXITS = 3;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  // The catalog is in before the service starts: the fault is armed on the first index generation.
  database = await prepareDatabase(cluster);
  service = await startService(
    {
      DATABASE_URL: database.url,
      WORKERS: "2",
      // The matching pool serves a single request thread; request threads match inline.
      REQUEST_THREADS: "1",
      DRILL_WORKER_EXIT: String(EXITS),
    },
    { entry: DRILL_ENTRY },
  );
}, 30_000);

afterAll(async () => {
  await service?.stop();
  await cluster?.destroy();
}, 30_000);

async function send(userId: string, batchKey: string): Promise<BatchRecord> {
  const media = batchItems(batchKey);
  const outcome = await call(service.baseUrl, {
    method: "POST",
    path: `/v1/users/${userId}/media`,
    key: database.key,
    body: { media },
  });
  return { userId, batchKey, ids: media.map((m) => m.id), outcome };
}

/** What is wrong with a batch's answer: a 200 must carry every item matched to its event. */
function answerProblem(record: BatchRecord, allowFailure: boolean): string | null {
  const { outcome } = record;
  if (outcome.kind === "answer" && outcome.status === 200) {
    const body = outcome.body as { matched?: unknown; matches?: { media_id: string; event_id: unknown }[] };
    const got = body.matches?.map((m) => `${m.media_id}@${m.event_id}`);
    const expected = record.ids.map((id) => `${id}@${expectedEventOf(id)}`);
    if (body.matched === record.ids.length && Bun.deepEquals(got, expected)) return null;
    return `${record.batchKey}: 200 with other matches: ${JSON.stringify(body).slice(0, 200)}`;
  }
  const code =
    outcome.kind === "answer" ? (outcome.body as { error?: { code?: unknown } }).error?.code : null;
  if (allowFailure && outcome.kind === "answer" && outcome.status === 500 && isEnvelope(outcome.body)) {
    return code === "internal_error" ? null : `${record.batchKey}: 500 with code ${String(code)}`;
  }
  return `${record.batchKey}: ${describeOutcome(outcome)}`;
}

test("worker threads that exit: 200 or a 500 envelope meanwhile, then all 200 with the same matches; nothing half stored", async () => {
  const users = await createUsers(service, database.key, "workers-", 6);
  const first = users[0] ?? "";

  // While the faults last: concurrent batches (their tasks coalesce), then two one at a time. Each
  // task is tried twice, so three exits are all used up by the time the third task has run.
  const during = await Promise.all(users.map((userId, i) => send(userId, `during-c${i}`)));
  for (let n = 0; n < 2; n++) during.push(await send(first, `during-s${n}`));

  // Afterwards: the failed batches sent again, then fresh ones, concurrent and one at a time.
  const failed = during.filter((b) => b.outcome.kind !== "answer" || b.outcome.status !== 200);
  const after = await Promise.all(failed.map((b) => send(b.userId, b.batchKey)));
  after.push(...(await Promise.all(users.map((userId, i) => send(userId, `after-c${i}`)))));
  for (let n = 0; n < 6; n++) after.push(await send(first, `after-s${n}`));

  const all = [...during, ...after];
  console.log(
    `workers: ${during.length} batches while the faults lasted (${failed.length} failed), ${after.length} after`,
  );
  expect({
    during: during.map((b) => answerProblem(b, true)).filter((p) => p !== null),
    // The fault is real: with one retry per task, three exits fail at least one task twice.
    someFailed: failed.length > 0,
    after: after.map((b) => answerProblem(b, false)).filter((p) => p !== null),
    stored: await storedProblems(database.url, all),
    process: service.exitCode() === null ? "running" : service.describe(),
  }).toEqual({ during: [], someFailed: true, after: [], stored: [], process: "running" });
}, 40_000);

test("drills are read strictly, each only where its threads run; the service's config reads none", () => {
  const pool = { workers: 2, requestThreads: 1 };
  const reading = (env: Record<string, string>) => (name: string) => env[name];
  const problemsOf = (env: Record<string, string>, threads = pool) => {
    try {
      drillsOf(reading(env), threads);
      return [];
    } catch (error) {
      return error instanceof DrillError
        ? error.problems.map((p) => p.slice(0, p.indexOf(":")))
        : [String(error)];
    }
  };
  expect(drillsOf(() => undefined, pool)).toEqual({ workerExit: null, threadSignal: false });
  expect(drillsOf(reading({ DRILL_WORKER_EXIT: "3" }), pool).workerExit).toBe(3);
  for (const value of ["0", "-1", "2x", "1e2"]) {
    expect(problemsOf({ DRILL_WORKER_EXIT: value })).toEqual(["DRILL_WORKER_EXIT"]);
  }
  // Inline matching (WORKERS=0, or on request threads) has no worker thread to exit.
  expect(problemsOf({ DRILL_WORKER_EXIT: "1" }, { workers: 0, requestThreads: 1 })).toEqual([
    "DRILL_WORKER_EXIT",
  ]);
  expect(problemsOf({ DRILL_WORKER_EXIT: "1" }, { workers: 2, requestThreads: 2 })).toEqual([
    "DRILL_WORKER_EXIT",
  ]);
  const threads = { workers: 0, requestThreads: 2 };
  expect(drillsOf(reading({ DRILL_THREAD_SIGNAL: "TRUE" }), threads).threadSignal).toBe(true);
  expect(problemsOf({ DRILL_THREAD_SIGNAL: "yes" }, threads)).toEqual(["DRILL_THREAD_SIGNAL"]);
  // With one request thread the thread is the process: the signal would end nothing.
  expect(problemsOf({ DRILL_THREAD_SIGNAL: "true" })).toEqual(["DRILL_THREAD_SIGNAL"]);
  // The old test hooks are no settings of the service: not read, so not even a bad value is refused.
  const config = parseConfig({ WORKERS: "2", FAULT_WORKER_EXIT: "x", FAULT_THREAD_SIGNAL: "x" });
  expect(Object.keys(config).filter((key) => /fault|drill/i.test(key))).toEqual([]);
});
