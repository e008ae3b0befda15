import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SOME_UUID } from "./support/routes.ts";
import { type CallOptions, startTestServer, type TestServer } from "./support/server.ts";

/**
 * docs/api.md §2: when a request breaks several rules, the first check in this order decides the answer:
 * route (404/405), ping, key (401), budget (429), path parameters (400), Content-Type (415), size (413),
 * JSON (400), the endpoint's own body rules (400), and only then the user (404 user_not_found).
 */

let server: TestServer;
let key: string;
let otherKey: string;
let userId: string;
let foreignUserId: string;

const json = { "content-type": "application/json" };
const tooBig = `{"pad":"${"a".repeat(2 * 1024 * 1024)}"}`;
const BAD_UUID = "not-a-uuid";

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  otherKey = (await server.partner("globex")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "order@example.com" } })).body
    .user_id;
  foreignUserId = (
    await server.call("POST", "/v1/users", { key: otherKey, body: { email: "o@example.com" } })
  ).body.user_id;
});

afterAll(async () => {
  await server.close();
});

async function codeOf(method: string, path: string, options: CallOptions = {}): Promise<string> {
  const response = await server.call(method, path, options);
  return response.status < 400 ? `ok ${response.status}` : `${response.status} ${response.body.error.code}`;
}

describe("order of checks", () => {
  test("the route comes before the key", async () => {
    expect(await codeOf("GET", "/v1/unknown")).toBe("404 not_found");
    expect(await codeOf("GET", `/v1/users/${BAD_UUID}/whatever`, { key: "bad" })).toBe("404 not_found");
    expect(await codeOf("DELETE", `/v1/users/${BAD_UUID}/stats`)).toBe("405 method_not_allowed");
    expect(await codeOf("GET", "/v1/users", { key: "bad", rawBody: undefined })).toBe(
      "405 method_not_allowed",
    );
  });

  test("ping answers before any key check", async () => {
    expect(await codeOf("GET", "/v1/ping", { key: "not-a-key" })).toBe("ok 200");
  });

  test("the key comes before path parameters, Content-Type, size and JSON", async () => {
    const bad = { key: "acme-short" };
    expect(await codeOf("GET", `/v1/users/${BAD_UUID}/stats?top=0`, bad)).toBe("401 invalid_api_key");
    expect(await codeOf("POST", `/v1/users/${BAD_UUID}/events/0/hide`, bad)).toBe("401 invalid_api_key");
    expect(
      await codeOf("POST", "/v1/users", { ...bad, rawBody: "x", headers: { "content-type": "text/plain" } }),
    ).toBe("401 invalid_api_key");
    expect(await codeOf("POST", "/v1/users", { ...bad, rawBody: tooBig, headers: json })).toBe(
      "401 invalid_api_key",
    );
    expect(await codeOf("POST", "/v1/users", { ...bad, rawBody: "{", headers: json })).toBe(
      "401 invalid_api_key",
    );
    expect(await codeOf("GET", "/v1/health", bad)).toBe("401 invalid_api_key");
  });

  test("path parameters come before Content-Type, size and body", async () => {
    const path = `/v1/users/${BAD_UUID}/sync-complete`;
    expect(await codeOf("POST", path, { key, rawBody: "x", headers: { "content-type": "text/plain" } })).toBe(
      "400 invalid_request",
    );
    expect(await codeOf("POST", path, { key, rawBody: tooBig, headers: json })).toBe("400 invalid_request");
    const hide = `/v1/users/${userId}/events/abc/hide`;
    expect(await codeOf("POST", hide, { key, rawBody: "x", headers: { "content-type": "text/plain" } })).toBe(
      "400 invalid_request",
    );
  });

  test("Content-Type comes before size, and size before JSON", async () => {
    const path = `/v1/users/${userId}/sync-complete`;
    expect(
      await codeOf("POST", path, { key, rawBody: tooBig, headers: { "content-type": "text/plain" } }),
    ).toBe("415 unsupported_media_type");
    expect(await codeOf("POST", path, { key, rawBody: `${tooBig}{`, headers: json })).toBe(
      "413 payload_too_large",
    );
  });

  test("the body comes before the user, for an unknown user and another partner's", async () => {
    for (const id of [SOME_UUID, foreignUserId]) {
      const base = `/v1/users/${id}`;
      expect(await codeOf("POST", `${base}/sync-complete`, { key, rawBody: "{", headers: json })).toBe(
        "400 invalid_request",
      );
      expect(await codeOf("POST", `${base}/sync-complete`, { key, body: { photos_processed: -1 } })).toBe(
        "400 invalid_request",
      );
      expect(await codeOf("POST", `${base}/events/1/hide`, { key, body: [] })).toBe("400 invalid_request");
      expect(await codeOf("GET", `${base}/stats?top=99`, { key })).toBe("400 invalid_request");
      expect(await codeOf("POST", `${base}/media`, { key, body: { media: [] } })).toBe("400 empty_batch");
      expect(await codeOf("POST", `${base}/sync-complete`, { key, body: {} })).toBe("404 user_not_found");
      expect(await codeOf("GET", `${base}/stats`, { key })).toBe("404 user_not_found");
    }
  });

  test("U+0000 and invalid UTF-8 come before the user", async () => {
    const path = `/v1/users/${SOME_UUID}/sync-complete`;
    expect(await codeOf("POST", path, { key, rawBody: '{"x":"\\u0000"}', headers: json })).toBe(
      "400 invalid_request",
    );
    expect(
      await codeOf("POST", path, { key, rawBody: new Uint8Array([0x22, 0xc3, 0x22]), headers: json }),
    ).toBe("400 invalid_request");
  });

  test("the user comes before the event", async () => {
    expect(await codeOf("POST", `/v1/users/${foreignUserId}/events/12345/hide`, { key })).toBe(
      "404 user_not_found",
    );
    expect(await codeOf("POST", `/v1/users/${userId}/events/12345/hide`, { key })).toBe(
      "404 event_not_found",
    );
  });

  test("invalid_email wins over other field problems, a non-object body over the email", async () => {
    expect(await codeOf("POST", "/v1/users", { key, body: { email: "nope", first_name: 5 } })).toBe(
      "400 invalid_email",
    );
    expect(await codeOf("POST", "/v1/users", { key, body: { first_name: 5 } })).toBe("400 invalid_email");
    expect(await codeOf("POST", "/v1/users", { key, body: ["a@b.co"] })).toBe("400 invalid_request");
  });
});

describe("order of checks with a spent budget", () => {
  let limited: TestServer;
  let limitedKey: string;

  beforeAll(async () => {
    limited = await startTestServer({
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_WRITE: "1",
      RATE_LIMIT_READ: "1",
    });
    limitedKey = (await limited.partner("acme")).sandbox;
  });

  afterAll(async () => {
    await limited.close();
  });

  test("the key comes before the budget, the budget before path parameters and body; health is never limited", async () => {
    const first = await limited.call("POST", "/v1/users", { key: limitedKey, body: { email: "a@b.co" } });
    expect(first.status).toBe(201);
    const spent = await limited.call("POST", `/v1/users/${BAD_UUID}/sync-complete`, {
      key: limitedKey,
      rawBody: "{",
      headers: { "content-type": "text/plain" },
    });
    expect([spent.status, spent.body.error.code]).toEqual([429, "rate_limited"]);
    expect(Number(spent.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const badKey = await limited.call("POST", "/v1/users", { key: "acme-x", body: { email: "a@b.co" } });
    expect(badKey.status).toBe(401);
    const unknownPath = await limited.call("POST", "/v1/users/x/unknown", { key: limitedKey });
    expect(unknownPath.status).toBe(404);
    expect((await limited.call("GET", "/v1/health", { key: limitedKey })).status).toBe(200);
    // The read budget is separate from the write budget.
    const read = await limited.call("GET", `/v1/users/${first.body.user_id}/stats`, { key: limitedKey });
    expect(read.status).toBe(200);
  });
});
