/**
 * A client that stops sending its body part way: the service answers 408 request_timeout in the
 * envelope within about 10 s and closes the connection, blames nothing on the database, and stores
 * nothing. On a PostgreSQL cluster of this file's own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import postgres from "postgres";
import { batchItems, type FaultDatabase, prepareDatabase } from "./support/faultFixture.ts";
import { createUsers, describeOutcome } from "./support/faultTraffic.ts";
import { createPrivateCluster, type PrivateCluster } from "./support/privateCluster.ts";
import { call, isEnvelope, type ServiceProcess, startService } from "./support/serviceProcess.ts";

let cluster: PrivateCluster;
let database: FaultDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  cluster = await createPrivateCluster();
  database = await prepareDatabase(cluster);
  service = await startService({ DATABASE_URL: database.url });
}, 30_000);

afterAll(async () => {
  await service?.stop();
  await cluster?.destroy();
}, 30_000);

/** The runtime's idle timeout, which closes a silent connection: the answer must come by then. */
const ANSWER_WITHIN_MS = 10_000;
/** Slack for a loaded machine's timers. */
const SLACK_MS = 1_000;

/** An HTTP/1.1 response as read off the socket: status, headers, body (chunked or not). */
function parseResponse(raw: string): { status: number; headers: Map<string, string>; body: string } | null {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine = "", ...headerLines] = raw.slice(0, end).split("\r\n");
  const status = Number(statusLine.split(" ")[1]);
  const headers = new Map(
    headerLines.map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  let body = raw.slice(end + 4);
  if (headers.get("transfer-encoding") === "chunked") {
    let decoded = "";
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      const size = Number.parseInt(rest.slice(0, lineEnd), 16);
      if (lineEnd < 0 || !(size > 0)) break;
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = decoded;
  }
  return { status, headers, body };
}

test("a body that stops arriving is answered 408 request_timeout and the connection closed; nothing is stored", async () => {
  const [userId = ""] = await createUsers(service, database.key, "stall-", 1);
  const socket = connect(service.port, "127.0.0.1");
  let received = "";
  let answeredAt: number | null = null;
  let closedAt: number | null = null;
  socket.on("data", (chunk) => {
    received += chunk.toString("utf8");
    if (answeredAt === null && received.includes("\r\n\r\n")) answeredAt = performance.now();
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      closedAt = performance.now();
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const sentAt = performance.now();
  socket.write(
    `POST /v1/users/${userId}/media HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Partner-Api-Key: ${database.key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"media":[',
  );
  // The socket stays open and silent; the service is expected to end the exchange.
  await Promise.race([closed, Bun.sleep(ANSWER_WITHIN_MS + SLACK_MS + 4_000)]);
  socket.destroy();

  const response = parseResponse(received);
  let body: unknown = response?.body;
  try {
    body = JSON.parse(response?.body ?? "");
  } catch {
    // Left as text for the assertion to show.
  }
  const answerMs = answeredAt === null ? null : answeredAt - sentAt;
  const closeMs = closedAt === null ? null : closedAt - sentAt;

  const client = postgres(database.url, { max: 1, onnotice: () => {} });
  const [stored] = await client<{ media: number; synced: boolean }[]>`
      select (select count(*)::int from media where user_id = ${userId}::uuid) as media,
             (last_sync_at is not null or received_since_sync) as synced
      from users where id = ${userId}::uuid`;
  await client.end();

  // The service still takes a batch from this user afterwards.
  const after = await call(service.baseUrl, {
    method: "POST",
    path: `/v1/users/${userId}/media`,
    key: database.key,
    body: { media: batchItems("stall-after") },
  });

  expect({
    status: response?.status ?? `no answer (${received.length} bytes received)`,
    code: (body as { error?: { code?: unknown } } | undefined)?.error?.code,
    envelope: isEnvelope(body),
    answeredInTime:
      answerMs !== null && answerMs <= ANSWER_WITHIN_MS + SLACK_MS
        ? true
        : `answered after ${answerMs === null ? "never" : Math.round(answerMs)} ms`,
    connectionClosed:
      closeMs !== null && answerMs !== null && closeMs - answerMs < 2_000 ? true : `closed at ${closeMs} ms`,
    stored,
    process: service.exitCode() === null ? "running" : service.describe(),
    nextBatch: describeOutcome(after)
      .replace(/ after .*/, "")
      .slice(0, 3),
  }).toEqual({
    status: 408,
    code: "request_timeout",
    envelope: true,
    answeredInTime: true,
    connectionClosed: true,
    stored: { media: 0, synced: false },
    process: "running",
    nextBatch: "200",
  });
}, 30_000);
