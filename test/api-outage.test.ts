/** When the work behind a request fails or stalls: a prompt envelope for the partner, a useful log line. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { REQUEST_DEADLINE_MS } from "../src/http/server.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;
let stallMatching = false;
const logged: { event: string; fields: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      log: (event, fields = {}) => logged.push({ event, fields }),
      wrapMatcher: (inner) => ({
        match: (queries) => (stallMatching ? new Promise(() => {}) : inner.match(queries)),
        version: () => inner.version(),
        close: () => inner.close(),
      }),
    },
  );
  key = (await server.partner("acme")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "outage@example.com" } })).body
    .user_id;
});

afterAll(async () => {
  await server.close();
});

describe("failures", () => {
  test("the log names a failed query's cause, never its SQL text or the partner's data it carried", async () => {
    await server.store.rows(sql`alter table users rename to users_away`);
    try {
      const email = "private.person@example.com";
      const response = await server.call("POST", "/v1/users", { key, body: { email } });
      expect([response.status, response.body.error.code]).toEqual([500, "internal_error"]);
    } finally {
      await server.store.rows(sql`alter table users_away rename to users`);
    }
    const entry = logged.find((line) => line.event === "internal_error");
    expect(entry?.fields).toMatchObject({ route: "/v1/users", method: "POST" });
    const text = JSON.stringify(entry?.fields);
    expect(text).toContain("42P01");
    expect(text).not.toContain("private.person");
    expect(text).not.toContain("insert into");
  });

  test(`work that stalls is answered 500 internal_error after ${REQUEST_DEADLINE_MS / 1000} s, not left hanging`, async () => {
    stallMatching = true;
    try {
      const started = performance.now();
      const response = await server.call("POST", `/v1/users/${userId}/media`, {
        key,
        body: { media: [{ id: "a", taken_at: "2025-07-04T21:00:00Z", latitude: 1, longitude: 1 }] },
      });
      const elapsed = performance.now() - started;
      expect([response.status, response.body.error.code]).toEqual([500, "internal_error"]);
      expect(elapsed).toBeGreaterThanOrEqual(REQUEST_DEADLINE_MS - 50);
      // Before the runtime's 10 s idle timeout, which would close the connection without an answer.
      expect(elapsed).toBeLessThan(10_000);
      expect(logged.find((line) => line.event === "request_deadline")?.fields).toEqual({
        method: "POST",
        route: "/v1/users/:user_id/media",
        afterMs: REQUEST_DEADLINE_MS,
      });
    } finally {
      stallMatching = false;
    }
  });
});
