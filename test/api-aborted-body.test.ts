/** A client that stops sending its body midway: a bad request, never an internal error in the log. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { ACCESS_EVENT } from "../src/observability/log.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;
const logged: string[] = [];
/** Who waits for the status of a route's next request (see `loggedStatusOf`). */
const waiting = new Map<unknown, (status: unknown) => void>();

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      log: (event, fields = {}) => {
        logged.push(event);
        if (event !== ACCESS_EVENT) return;
        const { route, status } = fields;
        waiting.get(route)?.(status);
        waiting.delete(route);
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

/**
 * The status of the next request to `route` (its pattern), from its access-log line: the server writes
 * it once the request is answered, whether or not its client is still there to read the answer.
 */
function loggedStatusOf(route: string): Promise<unknown> {
  return new Promise((resolve) => waiting.set(route, resolve));
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
  const batch = loggedStatusOf("/v1/users/:user_id/media");
  await abandonBody(`/v1/users/${userId}/media`, 500, '{"media": [{"id": "a"');
  const user = loggedStatusOf("/v1/users");
  await abandonBody("/v1/users", 500, '{"email": "cut@exam');
  expect(await batch).toBe(400);
  expect(await user).toBe(400);
  expect(logged).not.toContain("internal_error");
  const again = await server.call("POST", "/v1/users", { key, body: { email: "cut@example.com" } });
  expect(again.status).toBe(201);
  const stats = await server.call("GET", `/v1/users/${userId}/stats`, { key });
  expect([stats.status, stats.body.last_sync_at]).toEqual([200, null]);
});
