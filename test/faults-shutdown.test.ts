/**
 * SIGTERM while requests are in flight: the service answers every one of them before it exits, and
 * exits 0 (docs/operations.md, Shutdown: in-flight requests finish).
 * On a PostgreSQL cluster of this file's own.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import postgres from "postgres";
import { batchItems, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, describeOutcome } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { waitFor } from "./support/processes.ts";
import { call, type Outcome, type ServiceProcess, startService } from "./support/serviceProcess.ts";
import { storedProblems } from "./support/storedProblems.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess | null = null;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  database = await prepareDatabase(cluster);
}, 30_000);

afterEach(async () => {
  await service?.stop();
  service = null;
});

afterAll(async () => {
  await cluster?.destroy();
}, 30_000);

const shutdownLogged = (current: ServiceProcess) =>
  current.stderrLines().some((line) => line.includes('"event":"shutdown"'));

/** Exit code within `timeoutMs`, or a description of a process that is still running. */
async function exitWithin(current: ServiceProcess, timeoutMs: number): Promise<number | string> {
  const timeout = Bun.sleep(timeoutMs).then(() => `still running after ${timeoutMs} ms`);
  return Promise.race([current.exited, timeout]);
}

test("batches and reads waiting on the database when SIGTERM arrives are all answered 200, then exit 0", async () => {
  // Enough read connections on every request thread that the reads below hold them all at the lock
  // while the batches still reach it.
  service = await startService({ DATABASE_URL: database.url, DATABASE_READ_POOL_SIZE: "8" });
  const current = service;
  const users = await createUsers(current, database.key, "term-", 4);
  // Something for history and stats to read.
  for (const [i, userId] of users.entries()) {
    const seeded = await call(current.baseUrl, {
      method: "POST",
      path: `/v1/users/${userId}/media`,
      key: database.key,
      body: { media: batchItems(`term-seed${i}`) },
    });
    if (seeded.kind !== "answer" || seeded.status !== 200) throw new Error(describeOutcome(seeded));
  }

  // A lock on user_events holds every batch and every history and stats read at the database, so
  // they are certainly in flight when the signal arrives.
  const holder = postgres(database.url, { max: 1, onnotice: () => {} });
  const lockTaken = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const holding = holder.begin(async (tx) => {
    await tx`lock table user_events in access exclusive mode`;
    lockTaken.resolve();
    await release.promise;
  });
  const observer = postgres(database.url, { max: 1, onnotice: () => {} });
  let inFlight: { label: string; outcome: Promise<Outcome> }[] = [];
  try {
    await lockTaken.promise;
    inFlight = users.flatMap((userId, i) => [
      {
        label: `POST media term-flight${i}`,
        outcome: call(current.baseUrl, {
          method: "POST",
          path: `/v1/users/${userId}/media`,
          key: database.key,
          body: { media: batchItems(`term-flight${i}`) },
        }),
      },
      {
        label: `GET ${i % 2 === 0 ? "events" : "stats"} of user ${i}`,
        outcome: call(current.baseUrl, {
          method: "GET",
          path: `/v1/users/${userId}/${i % 2 === 0 ? "events" : "stats"}`,
          key: database.key,
        }),
      },
    ]);
    // Every batch waits on the lock (the reads' pool has fewer connections; its others queue).
    let waiting = 0;
    const deadline = performance.now() + 5_000;
    while (waiting < users.length && performance.now() < deadline) {
      const [row] = await observer<{ waiting: number }[]>`
          select count(*)::int as waiting from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
      waiting = row?.waiting ?? 0;
      await Bun.sleep(20);
    }
    expect(waiting).toBeGreaterThanOrEqual(users.length);

    current.signal("SIGTERM");
    await waitFor("the service to log its shutdown", () => shutdownLogged(current), 5_000);
  } finally {
    release.resolve();
    await holding;
    await holder.end();
    await observer.end();
  }

  const outcomes = await Promise.all(
    inFlight.map(
      async ({ label, outcome }) => `${label}: ${describeOutcome(await outcome).replace(/ after .*/, "")}`,
    ),
  );
  const exit = await exitWithin(current, 20_000);
  expect({
    answers: outcomes.filter((line) => !/: 200 /.test(line)),
    exit,
    stored: await storedProblems(database.url, []),
  }).toEqual({ answers: [], exit: 0, stored: [] });
}, 40_000);

test("a request still sending its body when SIGTERM arrives is answered, then exit 0", async () => {
  service = await startService({ DATABASE_URL: database.url });
  const current = service;
  const [userId = ""] = await createUsers(current, database.key, "upload-", 1);
  const body = JSON.stringify({ media: batchItems("upload-flight") });
  const half = Math.floor(body.length / 2);

  const socket = connect(current.port, "127.0.0.1");
  let received = "";
  const closed = new Promise<void>((resolve) => {
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
    });
    socket.on("close", () => resolve());
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    `POST /v1/users/${userId}/media HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Partner-Api-Key: ${database.key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` +
      body.slice(0, half),
  );
  // The request has reached the service (its headers are in) when the signal arrives.
  await Bun.sleep(200);
  current.signal("SIGTERM");
  await waitFor("the service to log its shutdown", () => shutdownLogged(current), 5_000);
  socket.write(body.slice(half));
  const answered = await Promise.race([closed.then(() => true), Bun.sleep(15_000).then(() => false)]);
  socket.destroy();

  expect({
    answer: answered
      ? received.split("\r\n")[0] || "(connection closed with no answer)"
      : "no answer in 15 s",
    exit: await exitWithin(current, 20_000),
  }).toEqual({ answer: "HTTP/1.1 200 OK", exit: 0 });
}, 40_000);
