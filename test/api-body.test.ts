/** What every POST body must be before any endpoint reads it: UTF-8 JSON, shallow, and storable. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_NESTING } from "../src/http/body.ts";
import { postRoutes } from "./support/routes.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let userId: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  userId = (await server.call("POST", "/v1/users", { key, body: { email: "body@acme.test" } })).body.user_id;
});

afterAll(async () => {
  await server.close();
});

const json = { "content-type": "application/json" };

/** A sync-complete body whose unknown member nests `depth` arrays, so the body itself is one deeper. */
const nested = (depth: number) =>
  `{"photos_processed": 1, "later": ${"[".repeat(depth)}${"]".repeat(depth)}}`;

const syncComplete = (rawBody: string, headers: Record<string, string> = json) =>
  server.call("POST", `/v1/users/${userId}/sync-complete`, { key, rawBody, headers });

describe("encoding", () => {
  test("a charset other than UTF-8, or any Content-Encoding, is 415 on every POST", async () => {
    const refused: Record<string, string>[] = [
      { "content-type": "application/json; charset=utf-16" },
      { "content-type": "application/json; charset=latin1" },
      { "content-type": "application/json", "content-encoding": "gzip" },
    ];
    for (const route of postRoutes(userId)) {
      for (const headers of refused) {
        const response = await server.call("POST", route.path, {
          key,
          rawBody: JSON.stringify(route.body),
          headers,
        });
        expect([route.path, headers, response.status, response.body.error?.code]).toEqual([
          route.path,
          headers,
          415,
          "unsupported_media_type",
        ]);
      }
    }
  });

  test("UTF-8 by any of its names, and the identity encoding, are JSON", async () => {
    const accepted: Record<string, string>[] = [
      { "content-type": 'application/json; charset="UTF-8"' },
      { "content-type": "application/json;charset=utf8" },
      { "content-type": "application/json", "content-encoding": "identity" },
      { "content-type": "application/json", "content-encoding": "" },
    ];
    for (const headers of accepted) {
      expect([headers, (await syncComplete("{}", headers)).status]).toEqual([headers, 200]);
    }
  });
});

describe("nesting", () => {
  test(`a body nested more than ${MAX_NESTING} levels deep is invalid_request on every POST`, async () => {
    const rawBody = `{"deep": ${"[".repeat(MAX_NESTING)}${"]".repeat(MAX_NESTING)}}`;
    for (const route of postRoutes(userId)) {
      const response = await server.call("POST", route.path, { key, rawBody, headers: json });
      expect([route.path, response.status, response.body.error?.code]).toEqual([
        route.path,
        400,
        "invalid_request",
      ]);
    }
  });

  test("25,000 levels (50 KB) are refused as promptly, with nothing recursive reached", async () => {
    const deepest = await syncComplete(`{"photos_processed": ${"[".repeat(25_000)}${"]".repeat(25_000)}}`);
    expect([deepest.status, deepest.body.error.code]).toEqual([400, "invalid_request"]);
    const topLevel = await server.call("POST", `/v1/users/${userId}/media`, {
      key,
      rawBody: `${"[".repeat(25_000)}${"]".repeat(25_000)}`,
      headers: json,
    });
    expect([topLevel.status, topLevel.body.error.code]).toEqual([400, "invalid_request"]);
  });

  test(`exactly ${MAX_NESTING} levels, in an unknown member, are still ignored`, async () => {
    expect((await syncComplete(nested(MAX_NESTING - 1))).status).toBe(200);
    expect((await syncComplete(nested(MAX_NESTING))).status).toBe(400);
  });
});

describe("malformed strings outside media items", () => {
  test("member names count: U+0000 or a lone surrogate in a name is invalid_request", async () => {
    for (const rawBody of ['{"a\\u0000": 1}', '{"address": {"\\u0000": "x"}}', '{"\\ud800": 1}']) {
      const response = await syncComplete(rawBody);
      expect([rawBody, response.status, response.body.error.code]).toEqual([rawBody, 400, "invalid_request"]);
    }
  });

  test("every malformed string is named in details.fields, reason type", async () => {
    const response = await server.call("POST", "/v1/users", {
      key,
      rawBody:
        '{"email": "nul@b.co", "first_name": "x\\u0000", "address": {"city": "\\udc00"}, "z\\u0000": 1}',
      headers: json,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual({
      fields: [
        { field: "first_name", reason: "type" },
        { field: "address.city", reason: "type" },
        { field: "z\u0000", reason: "type" },
      ],
    });
  });
});
