/** A client that stops sending its body midway: a bad request, never an internal error in the log. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;
const logged: string[] = [];

beforeAll(async () => {
  server = await startTestServer({}, { log: (event) => logged.push(event) });
  key = (await server.partner("acme")).sandbox;
  const created = await server.call("POST", "/v1/users", { key, body: { email: "half@example.com" } });
  userId = created.body.user_id;
});

afterAll(async () => {
  await server.close();
});

/** Sends the head of a POST declaring `declared` bytes, then `sent` of them, then hangs up. */
function abandonBody(path: string, declared: number, sent: string): Promise<void> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-Partner-Api-Key: ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`,
      );
      setTimeout(() => socket.destroy(), 100);
    });
    socket.on("error", reject);
    socket.on("close", () => resolve());
  });
}

test("a body cut off before its declared length is not logged as an internal error, and stores nothing", async () => {
  await abandonBody(`/v1/users/${userId}/media`, 500, '{"media": [{"id": "a"');
  await abandonBody("/v1/users", 500, '{"email": "cut@exam');
  // The server notices the hang-up on its next read; give it that moment.
  await Bun.sleep(300);
  expect(logged).not.toContain("internal_error");
  const again = await server.call("POST", "/v1/users", { key, body: { email: "cut@example.com" } });
  expect(again.status).toBe(201);
  const stats = await server.call("GET", `/v1/users/${userId}/stats`, { key });
  expect([stats.status, stats.body.last_sync_at]).toEqual([200, null]);
});
