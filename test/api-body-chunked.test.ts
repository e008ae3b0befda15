/** Chunked bodies (no Content-Length), sent from a raw socket: the cap is judged as they arrive. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { BODY_TIMEOUT_MS, DROPPED_BODY_BYTES } from "../src/http/body.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "chunks@acme.test" } })).body
    .user_id;
});

afterAll(async () => {
  await server.close();
});

/** Slack for a loaded machine's timers on top of the promptness asked for. */
const ANSWER_WITHIN_MS = 1_000;
const SLACK_MS = 500;

type Exchange = {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** Milliseconds from the request's head to the answer's first byte. */
  answeredMs: number | null;
  /** ... to the connection's close. */
  closedMs: number | null;
};

/** Resolves once the socket can take more, or after a moment if it never says so. */
const drained = (socket: Socket) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 200);
    socket.once("drain", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * POSTs `payload` as chunks of `chunkBytes`, `pauseMs` apart per 64 KiB written, and keeps sending until
 * the whole payload is out or the service answers or hangs up; `finish` sends the closing chunk.
 */
async function sendChunked(
  path: string,
  payload: string,
  chunkBytes: number,
  pauseMs: number,
  finish: boolean,
): Promise<Exchange> {
  const { hostname, port } = new URL(server.baseUrl);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const startedAt = performance.now();
  const at = () => performance.now() - startedAt;
  const exchange: Pick<Exchange, "answeredMs" | "closedMs"> = { answeredMs: null, closedMs: null };
  let received = "";
  socket.on("data", (data) => {
    exchange.answeredMs ??= at();
    received += data.toString("utf8");
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      exchange.closedMs = at();
      resolve();
    }),
  );
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-Partner-Api-Key: ${key}\r\n` +
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
  );
  let sent = 0;
  while (sent < payload.length && exchange.answeredMs === null && exchange.closedMs === null) {
    let block = "";
    for (const end = Math.min(sent + 65_536, payload.length); sent < end; sent += chunkBytes) {
      const piece = payload.slice(sent, sent + chunkBytes);
      block += `${piece.length.toString(16)}\r\n${piece}\r\n`;
    }
    if (!socket.write(block)) await drained(socket);
    if (pauseMs > 0) await Bun.sleep(pauseMs);
  }
  if (finish && exchange.closedMs === null) socket.write("0\r\n\r\n");
  const answered = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  if (exchange.answeredMs === null) await Promise.race([answered, closed, Bun.sleep(BODY_TIMEOUT_MS * 2)]);
  await Promise.race([closed, Bun.sleep(ANSWER_WITHIN_MS)]);
  socket.destroy();
  const end = received.indexOf("\r\n\r\n");
  const [statusLine = "", ...lines] = received.slice(0, Math.max(end, 0)).split("\r\n");
  const headers = new Map(
    lines.map((line) => [
      line.slice(0, line.indexOf(":")).toLowerCase(),
      line.slice(line.indexOf(":") + 1).trim(),
    ]),
  );
  return { ...exchange, status: Number(statusLine.split(" ")[1]), headers, body: received.slice(end + 4) };
}

/** A JSON object padded past the cap, to 3 MiB. */
const oversized = `{"media": [], "pad": "${"a".repeat(3 * 1024 * 1024)}"}`;

function expectRefusal(exchange: Exchange): void {
  expect(exchange.status).toBe(413);
  expect(exchange.headers.get("content-type")).toStartWith("application/json");
  expect(JSON.parse(exchange.body)).toEqual({
    error: { code: "payload_too_large", message: expect.any(String) },
  });
}

describe("a chunked body past 2 MiB", () => {
  test("sent whole: 413 in the envelope once it ends, and the connection stays open", async () => {
    const exchange = await sendChunked(`/v1/users/${userId}/media`, oversized, 16 * 1024, 0, true);
    expectRefusal(exchange);
    expect(exchange.headers.get("connection")).not.toBe("close");
    expect(exchange.closedMs).toBeNull();
    const stats = await server.call("GET", `/v1/users/${userId}/stats`, { key });
    expect([stats.status, stats.body.last_sync_at]).toEqual([200, null]);
  });

  test("that stops arriving: 413, not 408, at the body's deadline, and the connection closes", async () => {
    const exchange = await sendChunked(`/v1/users/${userId}/sync-complete`, oversized, 16 * 1024, 0, false);
    expectRefusal(exchange);
    expect(exchange.answeredMs ?? 0).toBeGreaterThan(BODY_TIMEOUT_MS - SLACK_MS);
    expect(exchange.answeredMs ?? Number.POSITIVE_INFINITY).toBeLessThan(BODY_TIMEOUT_MS + ANSWER_WITHIN_MS);
    expect(exchange.headers.get("connection")).toBe("close");
    expect(exchange.closedMs).not.toBeNull();
  });

  test("past what the service reads to get its answer through: 413 at once, and the connection closes", async () => {
    const endless = `{"pad": "${"a".repeat(DROPPED_BODY_BYTES + 1024 * 1024)}"}`;
    // A short pause per 64 KiB lets the client read the answer before writing on: data it writes after
    // the service closed draws a reset, which discards an answer not yet read.
    const exchange = await sendChunked(`/v1/users/${userId}/media`, endless, 64 * 1024, 5, false);
    expectRefusal(exchange);
    expect(exchange.answeredMs ?? Number.POSITIVE_INFINITY).toBeLessThan(BODY_TIMEOUT_MS - SLACK_MS);
    expect(exchange.headers.get("connection")).toBe("close");
    expect(exchange.closedMs).not.toBeNull();
  });
});

test("a body under the cap in one-byte chunks is read whole", async () => {
  const body = JSON.stringify({ email: "bytes@acme.test", pad: "b".repeat(200_000) });
  const created = await sendChunked("/v1/users", body, 1, 0, true);
  expect(created.status).toBe(201);
  const again = await server.call("POST", "/v1/users", { key, body: { email: "bytes@acme.test" } });
  expect([again.status, again.body.user_id]).toEqual([200, JSON.parse(created.body).user_id]);
});
