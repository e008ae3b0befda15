/**
 * Clients that write their whole body before they read the answer (Python's urllib, a streamed fetch),
 * sent from a raw socket: an answer given before the body ends must still reach them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { BODY_TIMEOUT_MS, MAX_BODY_BYTES } from "../src/http/body.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "unread@acme.test" } })).body
    .user_id;
});

afterAll(async () => {
  await server.close();
});

/** Far past what the kernel buffers on loopback, so that a connection closed early fails a write. */
const BODY_BYTES = 6 * MAX_BODY_BYTES;

type Outcome = { writeError: string | null; status: number; code: string | undefined };

/**
 * Writes the request head and the whole body, waiting for the socket to take each part, and only then
 * reads the answer, as a client that writes before it reads does.
 */
async function writeThenRead(head: string, body: Buffer): Promise<Outcome> {
  const { hostname, port } = new URL(server.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.pause();
  let writeError: string | null = null;
  socket.on("error", (error: NodeJS.ErrnoException) => {
    writeError ??= error.code ?? error.message;
  });
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const piece = 64 * 1024;
  const parts = [
    Buffer.from(head),
    ...Array.from({ length: Math.ceil(body.length / piece) }, (_, i) =>
      body.subarray(i * piece, (i + 1) * piece),
    ),
  ];
  for (const part of parts) {
    if (writeError !== null) break;
    if (!socket.write(part)) {
      await new Promise<void>((resolve) => {
        socket.once("drain", resolve);
        socket.once("close", resolve);
      });
    }
  }
  let received = "";
  const answered = new Promise<void>((resolve) => {
    socket.on("data", (data) => {
      received += data.toString("utf8");
      if (wholeAnswer(received)) resolve();
    });
    socket.once("close", () => resolve());
  });
  socket.resume();
  await Promise.race([answered, Bun.sleep(BODY_TIMEOUT_MS)]);
  socket.destroy();
  const status = Number(received.split(" ")[1]);
  const envelope = received.slice(received.indexOf("\r\n\r\n") + 4);
  const code = envelope.startsWith("{") ? JSON.parse(envelope).error?.code : undefined;
  return { writeError, status, code };
}

/** Whether `received` holds an answer's head and as many bytes of body as its Content-Length says. */
function wholeAnswer(received: string): boolean {
  const end = received.indexOf("\r\n\r\n");
  const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1];
  return end >= 0 && length !== undefined && Buffer.byteLength(received.slice(end + 4)) >= Number(length);
}

const padded = (bytes: number) => Buffer.from(`{"pad": "${"a".repeat(bytes - 12)}"}`);

function declaredHead(path: string, length: number, apiKey: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: rollcall.test\r\nConnection: close\r\nX-Partner-Api-Key: ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
  );
}

test("a client that asks to close and declares a body over the cap gets its 413", async () => {
  const body = padded(BODY_BYTES);
  const outcome = await writeThenRead(declaredHead(`/v1/users/${userId}/media`, body.length, key), body);
  expect(outcome).toEqual({ writeError: null, status: 413, code: "payload_too_large" });
});

test("... and a refusal that comes before the body is read (an unknown key) too", async () => {
  const body = padded(BODY_BYTES);
  const outcome = await writeThenRead(declaredHead(`/v1/users/${userId}/media`, body.length, "nope"), body);
  expect(outcome).toEqual({ writeError: null, status: 401, code: "invalid_api_key" });
});

test("a client that keeps the connection and streams a chunked body over the cap gets its 413", async () => {
  const payload = padded(BODY_BYTES);
  const piece = 16 * 1024;
  const chunks = Array.from({ length: Math.ceil(payload.length / piece) }, (_, i) => {
    const part = payload.subarray(i * piece, (i + 1) * piece);
    return Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]);
  });
  const head =
    `POST /v1/users/${userId}/media HTTP/1.1\r\nHost: rollcall.test\r\nX-Partner-Api-Key: ${key}\r\n` +
    "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  const outcome = await writeThenRead(head, Buffer.concat([...chunks, Buffer.from("0\r\n\r\n")]));
  expect(outcome).toEqual({ writeError: null, status: 413, code: "payload_too_large" });
});
