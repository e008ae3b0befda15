import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { sql } from "drizzle-orm";
import { routePolicies } from "../src/http/apiRoutes.ts";
import { statusOf } from "../src/http/errors.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/** What the frame adds to every route: request ids, the operational endpoints, the last-resort envelope. */

let server: TestServer;
let keys: { sandbox: string; production: string };
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  keys = await server.partner("acme");
  userId = (await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "me@acme.test" } }))
    .body.user_id;
});

afterAll(async () => {
  await server.close();
});

describe("frame", () => {
  test("every response carries an X-Request-Id and Cache-Control: no-store; a sane incoming id is echoed, anything else replaced", async () => {
    const responses = [
      await server.call("GET", "/v1/ping"),
      await server.call("GET", "/v1/nope"),
      await server.call("PUT", "/v1/ping"),
      await server.call("GET", "/v1/health"),
      await server.call("GET", `/v1/users/${userId}/stats`, { key: keys.sandbox }),
      await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "x" } }),
    ];
    for (const response of responses) {
      expect(response.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
      // Answers carry users' data or say whether a user exists: no cache may keep them.
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
    const echoed = await server.call("GET", "/v1/ping", { headers: { "x-request-id": "req-123_abc.def:9" } });
    expect(echoed.headers.get("x-request-id")).toBe("req-123_abc.def:9");
    for (const insane of ["has space", "x".repeat(129), "semi;colon", "<script>"]) {
      const replaced = await server.call("GET", "/v1/nope", { headers: { "x-request-id": insane } });
      const id = replaced.headers.get("x-request-id");
      expect(id).not.toBe(insane);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  test("every JSON answer names its media type in one spelling, success or error", async () => {
    const responses = [
      await server.call("GET", "/v1/ping"),
      await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "me@acme.test" } }),
      await server.call("POST", `/v1/users/${userId}/media`, {
        key: keys.sandbox,
        body: { media: [{ id: "a" }] },
      }),
      await server.call("GET", `/v1/users/${userId}/events`, { key: keys.sandbox }),
      await server.call("GET", "/v1/nope"),
      await server.call("PUT", "/v1/ping"),
      await server.call("GET", `/v1/users/${userId}/stats`),
      await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "x" } }),
    ];
    const statuses = responses.map((response) => response.status);
    expect(statuses).toEqual([200, 200, 200, 200, 404, 405, 401, 400]);
    const mediaTypes = new Set(responses.map((response) => response.headers.get("content-type")));
    expect([...mediaTypes]).toEqual(["application/json;charset=utf-8"]);
  });

  test("/v1/ping answers without a key, whatever key is sent", async () => {
    for (const key of [null, "garbage", keys.production]) {
      const response = await server.call("GET", "/v1/ping", { key });
      expect([response.status, response.body]).toEqual([200, { status: "ok", version: "v1" }]);
    }
  });

  test("/v1/health reports the partner, the environment and the rate limits", async () => {
    const response = await server.call("GET", "/v1/health", { key: keys.sandbox });
    expect(response.status).toBe(200);
    // The spec's members; the service may report more about its limiter.
    expect(response.body).toMatchObject({
      status: "ok",
      version: "v1",
      partner_id: "acme",
      environment: "sandbox",
      rate_limit: {
        enabled: false,
        window_seconds: 60,
        ingest_per_window: null,
        read_per_window: null,
        write_per_window: null,
      },
    });
  });

  test("/v1/openapi.json documents every route, relative to the base address, with every status", async () => {
    const response = await server.call("GET", "/v1/openapi.json", { key: keys.sandbox });
    expect(response.status).toBe(200);
    // Paths are relative to the server's URL, which holds the version prefix (a client given the base
    // address must not call /v1/v1/ping).
    expect(response.body.servers.map((s: { url: string }) => s.url)).toEqual(["/v1"]);
    // Integers are integers (not the framework's string-or-integer union), and error codes are the
    // closed set of errors.ts.
    const document = JSON.stringify(response.body);
    expect(document).not.toContain('"format":"integer');
    expect(document.includes(`"enum":${JSON.stringify(Object.keys(statusOf))}`)).toBe(true);
    const paths = response.body.paths as Record<
      string,
      Record<string, { summary?: string; tags?: string[]; responses?: object }>
    >;
    // The document and the gate's table list the same routes, and the server answers each of them
    // (no key: 401, or 200 for /ping), never 404.
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.keys(operations).map(
        (method) => `${method.toUpperCase()} /v1${path.replace(/\{(\w+)\}/g, ":$1")}`,
      ),
    );
    expect(documented.toSorted()).toEqual(Object.keys(routePolicies).toSorted());
    for (const route of documented) {
      const [method = "", pattern = ""] = route.split(" ");
      const path = pattern.replace(":user_id", userId).replace(":event_id", "1");
      const { status } = await server.call(method, path, { body: method === "POST" ? {} : undefined });
      expect({ route, status }).toEqual({ route, status: pattern === "/v1/ping" ? 200 : 401 });
    }
    for (const route of Object.keys(routePolicies)) {
      const [method = "", pattern = ""] = route.split(" ");
      const operation = paths[pattern.slice("/v1".length).replace(/:(\w+)/g, "{$1}")]?.[method.toLowerCase()];
      expect(operation?.summary).toBeString();
      const statuses = Object.keys(operation?.responses ?? {});
      // Every path answers other methods with 405 (docs/api.md §2 step 1).
      expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(["405", "500"]) });
      if (routePolicies[route]?.auth)
        expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(["401"]) });
      if (pattern.startsWith("/v1/users")) {
        expect(operation?.tags?.length).toBeGreaterThan(0);
        expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(["400", "429"]) });
      }
      if (pattern.startsWith("/v1/users/")) {
        expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(["404"]) });
      }
      if (method === "POST") {
        expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(["413", "415"]) });
      }
    }
  });

  test("an unexpected failure is a 500 internal_error envelope that reveals nothing", async () => {
    await server.store.rows(sql`alter table user_events rename to user_events_away`);
    try {
      const response = await server.call("GET", `/v1/users/${userId}/stats`, { key: keys.sandbox });
      expect([response.status, response.body.error.code]).toEqual([500, "internal_error"]);
      expect(response.headers.get("content-type")).toStartWith("application/json");
      expect(JSON.stringify(response.body)).not.toContain("user_events");
      expect(response.headers.get("x-request-id")).toBeString();
    } finally {
      await server.store.rows(sql`alter table user_events_away rename to user_events`);
    }
  });
});

/** Sends `head` (request line and headers, CRLF-separated) as it is, and returns the status and body. */
function rawRequest(head: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`${head}\r\nConnection: close\r\n\r\n`),
    );
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [statusLine = "", ...rest] = text.split("\r\n");
      resolve({ status: Number(statusLine.split(" ")[1]), body: rest.join("\r\n") });
    });
  });
}

describe("Host header", () => {
  test("a large answer leaves as one chunked body, a small one with its Content-Length", async () => {
    // docs/performance.md §12: the runtime writes a large answer given after an await in pieces.
    const media = Array.from({ length: 200 }, (_, i) => ({
      id: `frame-${i}`,
      taken_at: "2021-06-01T12:00:00Z",
      latitude: 10 + i / 1000,
      longitude: 20,
    }));
    const batch = await server.call("POST", `/v1/users/${userId}/media`, {
      key: keys.sandbox,
      body: { media },
    });
    expect(batch.status).toBe(200);
    expect(batch.headers.get("transfer-encoding")).toBe("chunked");
    expect(batch.headers.get("content-length")).toBeNull();
    expect(batch.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(batch.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
    expect(batch.body.matches).toHaveLength(200);
    const ping = await server.call("GET", "/v1/ping");
    expect(ping.headers.get("transfer-encoding")).toBeNull();
    expect(Number(ping.headers.get("content-length"))).toBeGreaterThan(0);
  });

  test("a short host, as an internal service name would be, is routed like any other", async () => {
    for (const host of ["api", "db", "a.b", "api:80"]) {
      const ping = await rawRequest(`GET /v1/ping HTTP/1.1\r\nHost: ${host}`);
      expect([host, ping.status]).toEqual([host, 200]);
      const stats = await rawRequest(
        `GET /v1/users/${userId}/stats HTTP/1.1\r\nHost: ${host}\r\nX-PARTNER-API-KEY: ${keys.sandbox}`,
      );
      expect([host, stats.status]).toEqual([host, 200]);
    }
  });

  test("an HTTP/1.0 request, which may leave Host out, is served", async () => {
    const ping = await rawRequest("GET /v1/ping HTTP/1.0");
    expect([ping.status, ping.body]).toEqual([
      200,
      expect.stringContaining('{"status":"ok","version":"v1"}'),
    ]);
    const stats = await rawRequest(
      `GET /v1/users/${userId}/stats?top=1 HTTP/1.0\r\nX-PARTNER-API-KEY: ${keys.sandbox}`,
    );
    expect(stats.status).toBe(200);
  });

  test("two Host headers are 400 invalid_request, whichever comes first", async () => {
    for (const hosts of ["Host: good.example\r\nHost: bad host", "Host: a.example\r\nHost: b.example"]) {
      const response = await rawRequest(`GET /v1/ping HTTP/1.1\r\n${hosts}`);
      expect([hosts, response.status]).toEqual([hosts, 400]);
      expect(response.body).toContain('"invalid_request"');
    }
  });

  test("a host that is no host is 400 invalid_request, not a 500", async () => {
    for (const host of ["x:99999", "a b", "x/y"]) {
      const response = await rawRequest(`GET /v1/ping HTTP/1.1\r\nHost: ${host}`);
      expect([host, response.status]).toEqual([host, 400]);
      expect(response.body).toContain('"invalid_request"');
    }
  });
});
