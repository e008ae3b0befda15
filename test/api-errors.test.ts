import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statusOf } from "../src/http/errors.ts";
import { issueKey, revokeKey } from "../src/store/keys.ts";
import { keyedRoutes, postRoutes, SOME_UUID, userRoutes } from "./support/routes.ts";
import { type CallResult, startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let keys: { sandbox: string; production: string };
let otherKey: string;
let userId: string;
let foreignUserId: string;

beforeAll(async () => {
  server = await startTestServer();
  keys = await server.partner("acme");
  otherKey = (await server.partner("globex")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "me@acme.test" } }))
    .body.user_id;
  foreignUserId = (await server.call("POST", "/v1/users", { key: otherKey, body: { email: "me@acme.test" } }))
    .body.user_id;
});

afterAll(async () => {
  await server.close();
});

function expectError(response: CallResult, code: keyof typeof statusOf): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({
    status: statusOf[code],
    code,
  });
  expect(typeof response.body.error.message).toBe("string");
  expect(response.headers.get("content-type")).toStartWith("application/json");
}

describe("invalid_api_key", () => {
  test("missing, malformed, unknown, revoked and other-environment keys get one identical answer on every route", async () => {
    const revoked = await issueKey(server.store, { partnerId: "acme", environment: "sandbox", label: "old" });
    await revokeKey(server.store, revoked.row.id);
    const bad: (string | null)[] = [
      null,
      "",
      "acme",
      "acme-",
      "ACME-0123456789012345678901234567890123456789012",
      `${keys.sandbox}x`,
      keys.sandbox.slice(0, -1),
      `nobody-${keys.sandbox.split("-").slice(1).join("-")}`,
      `globex-${keys.sandbox.split("-").slice(1).join("-")}`,
      revoked.key,
      keys.production,
    ];
    const messages = new Set<string>();
    for (const route of keyedRoutes(userId)) {
      for (const key of bad) {
        const response = await server.call(route.method, route.path, { key, body: route.body });
        expectError(response, "invalid_api_key");
        expect(response.body.error.details).toBeUndefined();
        messages.add(response.body.error.message);
      }
    }
    expect(messages.size).toBe(1);
  });

  test("the header name is case-insensitive", async () => {
    const response = await server.call("GET", "/v1/health", {
      headers: { "X-Partner-Api-Key": keys.sandbox },
    });
    expect(response.status).toBe(200);
  });
});

describe("user_not_found", () => {
  test("every user-scoped route refuses an unknown user and another partner's user alike", async () => {
    for (const id of [SOME_UUID, foreignUserId, SOME_UUID.toUpperCase()]) {
      for (const route of userRoutes(id)) {
        const response = await server.call(route.method, route.path, { key: keys.sandbox, body: route.body });
        expectError(response, "user_not_found");
      }
    }
  });

  test("the owner still sees the user on every route", async () => {
    for (const route of userRoutes(foreignUserId)) {
      const response = await server.call(route.method, route.path, { key: otherKey, body: route.body });
      expect(response.body?.error?.code).not.toBe("user_not_found");
    }
  });
});

describe("not_found and method_not_allowed", () => {
  test("unknown paths are not_found, key or not", async () => {
    for (const path of [
      "/",
      "/v1",
      "/v1/",
      "/v2/ping",
      "/v1/pings",
      "/v1/users/x/unknown",
      `/v1/users/${userId}/media/remove`,
      `/v1/users/${userId}/events/1`,
      `/v1/users/${userId}/events/1/hide/again`,
      "/v1/openapi",
    ]) {
      for (const key of [null, keys.sandbox])
        expectError(await server.call("GET", path, { key }), "not_found");
    }
  });

  test("a known path with a wrong method is method_not_allowed with an Allow header", async () => {
    const cases: [string, string, string][] = [
      ["POST", "/v1/ping", "GET"],
      ["DELETE", "/v1/health", "GET"],
      ["GET", "/v1/users", "POST"],
      ["GET", `/v1/users/${userId}`, "DELETE"],
      ["GET", `/v1/users/${userId}/media/delete`, "POST"],
      ["POST", `/v1/users/${userId}/export`, "GET"],
      ["PUT", `/v1/users/${userId}/media`, "POST"],
      ["POST", `/v1/users/${userId}/events`, "GET"],
      ["PATCH", `/v1/users/${userId}/stats`, "GET"],
      ["GET", `/v1/users/${userId}/events/1/hide`, "POST"],
      ["DELETE", `/v1/users/${userId}/sync-complete`, "POST"],
      ["OPTIONS", "/v1/users", "POST"],
      ["OPTIONS", `/v1/users/${userId}/events`, "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await server.call(method, path);
      expectError(response, "method_not_allowed");
      expect(response.headers.get("allow")).toBe(allow);
    }
    // A HEAD answer carries no body, so only its status and Allow header can be read.
    const head = await fetch(`${server.baseUrl}/v1/ping`, { method: "HEAD" });
    expect([head.status, head.headers.get("allow")]).toEqual([405, "GET"]);
  });
});

describe("request bodies", () => {
  test("every POST refuses a body that is not declared as JSON", async () => {
    for (const route of postRoutes(userId)) {
      for (const contentType of [
        null,
        "text/plain",
        "application/xml",
        "application/jsonp",
        "multipart/form-data",
      ]) {
        const headers: Record<string, string> = contentType === null ? {} : { "content-type": contentType };
        const response = await server.call("POST", route.path, {
          key: keys.sandbox,
          rawBody: JSON.stringify(route.body),
          headers,
        });
        expectError(response, "unsupported_media_type");
      }
    }
  });

  test("application/json with parameters and in any case is JSON", async () => {
    for (const contentType of [
      "application/json; charset=utf-8",
      "Application/JSON",
      "application/json;charset=UTF-8",
    ]) {
      const response = await server.call("POST", `/v1/users/${userId}/sync-complete`, {
        key: keys.sandbox,
        rawBody: "{}",
        headers: { "content-type": contentType },
      });
      expect(response.status).toBe(200);
    }
  });

  test("an empty body counts as {} whatever its content type", async () => {
    const response = await server.call("POST", `/v1/users/${userId}/sync-complete`, {
      key: keys.sandbox,
      headers: { "content-type": "text/plain" },
    });
    expect(response.status).toBe(200);
  });

  test("every POST refuses a body over 2 MiB, declared or streamed", async () => {
    const tooBig = `{"pad":"${"a".repeat(2 * 1024 * 1024)}"}`;
    for (const route of postRoutes(userId)) {
      expectError(
        await server.call("POST", route.path, {
          key: keys.sandbox,
          body: undefined,
          rawBody: tooBig,
          headers: json,
        }),
        "payload_too_large",
      );
      const streamed = await fetch(server.baseUrl + route.path, {
        method: "POST",
        headers: { ...json, "x-partner-api-key": keys.sandbox },
        body: new Blob([tooBig]).stream(),
      });
      expect(streamed.status).toBe(413);
      const envelope = (await streamed.json()) as { error: { code: string } };
      expect(envelope.error.code).toBe("payload_too_large");
    }
  });

  test("a body far over the cap still gets the envelope, and the key is judged first", async () => {
    const huge = `{"pad":"${"a".repeat(17 * 1024 * 1024)}"}`;
    const refused = await server.call("POST", "/v1/users", {
      key: keys.sandbox,
      rawBody: huge,
      headers: json,
    });
    expectError(refused, "payload_too_large");
    expectError(await server.call("POST", "/v1/users", { rawBody: huge, headers: json }), "invalid_api_key");
  });

  test("a body of exactly 2 MiB is read", async () => {
    const prefix = '{"email":"big@example.com","pad":"';
    const body = `${prefix}${"a".repeat(2 * 1024 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(2 * 1024 * 1024);
    const response = await server.call("POST", "/v1/users", {
      key: keys.sandbox,
      rawBody: body,
      headers: json,
    });
    expect(response.status).toBe(201);
  });

  test("malformed JSON, invalid UTF-8, U+0000 or an unpaired surrogate in a string are invalid_request on every POST", async () => {
    const bodies: (string | Uint8Array)[] = [
      "{",
      "{'email': 'a@b.co'}",
      '{"email": "a@b.co",}',
      "nul",
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      '{"email": "a\\u0000@b.co"}',
      '{"first_name": "x\\u0000", "email": "nul@b.co"}',
      '{"address": {"city": "\\u0000"}, "email": "nul@b.co"}',
      '{"email": "s\\ud800@b.co"}',
      '{"email": "lone@b.co", "address": {"line1": "\\udc00"}}',
      '{"email": "lone@b.co", "first_name": "\\uDBFF\\uDBFF\\uDFFF"}',
    ];
    for (const route of postRoutes(userId)) {
      for (const rawBody of bodies) {
        expectError(
          await server.call("POST", route.path, { key: keys.sandbox, rawBody, headers: json }),
          "invalid_request",
        );
      }
    }
  });

  test("a surrogate pair written as escapes is a character like any other", async () => {
    const response = await server.call("POST", "/v1/users", {
      key: keys.sandbox,
      rawBody: '{"email": "pair@b.co", "first_name": "\\ud83d\\ude00"}',
      headers: json,
    });
    expect(response.status).toBe(201);
  });

  test("any id in the UUID format, whatever its version and variant bits, is looked up: user_not_found", async () => {
    for (const unknown of [
      "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
      "3F2504E0-4F89-81D3-BA0C-0305E82C3301",
      "00000000-0000-0000-0000-000000000000",
      "12345678-1234-1234-1234-123456789012",
      "3f2504e0-4f89-91d3-7a0c-0305e82c3301",
    ]) {
      for (const route of userRoutes(unknown)) {
        const response = await server.call(route.method, route.path, { key: keys.sandbox, body: route.body });
        expectError(response, "user_not_found");
      }
    }
  });

  test("a malformed user_id or event_id is invalid_request", async () => {
    for (const bad of [
      "not-a-uuid",
      "3f2504e0-4f89-41d3-9a0c-0305e82c330",
      "3f2504e04f8941d39a0c0305e82c3301",
      "3f2504e0-4f89-41d3-9a0c-0305e82c330g",
      "{3f2504e0-4f89-41d3-9a0c-0305e82c3301}",
      "%00",
    ]) {
      for (const route of userRoutes(bad)) {
        const response = await server.call(route.method, route.path, { key: keys.sandbox, body: route.body });
        expectError(response, "invalid_request");
        expect(response.body.error.details).toEqual({ fields: [{ field: "user_id", reason: "type" }] });
      }
    }
    const both = await server.call("POST", "/v1/users/xyz/events/abc/hide", { key: keys.sandbox });
    expect(both.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
      "user_id",
      "event_id",
    ]);
  });
});

const json = { "content-type": "application/json" };
