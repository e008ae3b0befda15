/** A client that stops sending its body midway: a bad request, never an internal error in the log. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;
const logged: string[] = [];
type Answer = { status: number; body: Promise<unknown> };
/** Who waits for the app's answer to a request, by path (see `answerTo`). */
const waiting = new Map<string, (answer: Answer) => void>();

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      log: (event) => logged.push(event),
      onAnswered: (request, response) => {
        const path = new URL(request.url).pathname;
        waiting.get(path)?.({ status: response.status, body: response.clone().json() });
        waiting.delete(path);
      },
    },
  );
  key = (await server.partner("acme")).sandbox;
  const created = await server.call("POST", "/v1/users", { key, body: { email: "half@example.com" } });
  userId = created.body.user_id;
});

afterAll(async () => {
  await server.close();
});

/** The app's next answer to a request for `path`: its status and error code. */
async function answerTo(path: string): Promise<{ status: number; code: unknown }> {
  const answer = await new Promise<Answer>((resolve) => waiting.set(path, resolve));
  const body = (await answer.body) as { error?: { code?: unknown } };
  return { status: answer.status, code: body.error?.code };
}

/** Sends the head of a POST declaring `declared` bytes and `sent` of them, then hangs up at once. */
function abandonBody(path: string, declared: number, sent: string): Promise<void> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-Partner-Api-Key: ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`,
        () => socket.destroy(),
      );
    });
    socket.on("error", reject);
    socket.on("close", () => resolve());
  });
}

test("a body cut off before its declared length is a bad request, not logged as an internal error, and stores nothing", async () => {
  const batchPath = `/v1/users/${userId}/media`;
  const batch = answerTo(batchPath);
  await abandonBody(batchPath, 500, '{"media": [{"id": "a"');
  const user = answerTo("/v1/users");
  await abandonBody("/v1/users", 500, '{"email": "cut@exam');
  expect(await batch).toEqual({ status: 400, code: "invalid_request" });
  expect(await user).toEqual({ status: 400, code: "invalid_request" });
  expect(logged).not.toContain("internal_error");
  const again = await server.call("POST", "/v1/users", { key, body: { email: "cut@example.com" } });
  expect(again.status).toBe(201);
  const stats = await server.call("GET", `/v1/users/${userId}/stats`, { key });
  expect([stats.status, stats.body.last_sync_at]).toEqual([200, null]);
});
