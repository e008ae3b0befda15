import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { type ErrorCode, statusOf } from "../src/http/errors.ts";
import { SOME_UUID } from "./support/routes.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * Throws arbitrary methods, paths, query strings, headers and bodies at every endpoint and checks the
 * promises that hold whatever the input: never a 5xx, only statuses docs/api.md §11 lists, an X-Request-Id
 * always, and every error in the envelope with a known code whose status is the code's own, which the
 * OpenAPI document lists for the operation called.
 */

let server: TestServer;
let keys: { sandbox: string; production: string };
let otherKey: string;
let userId: string;
let foreignUserId: string;
let documented: DocumentedAnswers;

const ALLOWED_STATUSES = new Set([200, 201, 400, 401, 404, 405, 413, 415, 429]);

beforeAll(async () => {
  server = await startTestServer();
  keys = await server.partner("acme");
  otherKey = (await server.partner("globex")).sandbox;
  userId = (
    await server.call("POST", "/v1/users", { key: keys.sandbox, body: { email: "fuzz@example.com" } })
  ).body.user_id;
  foreignUserId = (
    await server.call("POST", "/v1/users", { key: otherKey, body: { email: "fuzz@example.com" } })
  ).body.user_id;
  documented = documentedAnswers((await server.call("GET", "/v1/openapi.json", { key: keys.sandbox })).body);
});

type Operation = { responses: Record<string, ResponseObject> };
type ResponseObject = {
  content: { "application/json": { schema: { allOf?: { properties?: ErrorProperties }[] } } };
};
type ErrorProperties = { error: { properties: { code: { enum: string[] } } } };

/** For a request, the codes the OpenAPI document lists by status for its operation, if it names one. */
type DocumentedAnswers = (method: string, path: string) => Map<number, string[] | null> | null;

function documentedAnswers(document: {
  paths: Record<string, Record<string, Operation>>;
}): DocumentedAnswers {
  const operations = Object.entries(document.paths).flatMap(([template, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({
      method: method.toUpperCase(),
      pattern: new RegExp(`^/v1${template.replace(/\{\w+\}/g, "[^/]+")}/?$`),
      answers: new Map(
        Object.entries(operation.responses).map(([status, response]) => {
          const narrowed = response.content["application/json"].schema.allOf?.[1]?.properties;
          return [Number(status), narrowed?.error.properties.code.enum ?? null] as const;
        }),
      ),
    })),
  );
  return (method, path) =>
    operations.find((operation) => operation.method === method && operation.pattern.test(path))?.answers ??
    null;
}

afterAll(async () => {
  await server.close();
});

/** Header values fetch can send: visible ASCII and spaces. */
const headerText = fc.stringMatching(/^[\x20-\x7e]{0,60}$/);

const userIdArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .constantFrom(
        () => userId,
        () => foreignUserId,
        () => SOME_UUID,
      )
      .map((f) => f()),
  },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.webSegment() },
  { weight: 1, arbitrary: fc.string().map(encodeURIComponent) },
);

const eventIdArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("1", "100", "2147483647") },
  { weight: 1, arbitrary: fc.constantFrom("2147483648", "0", "-1", "1.0", "01") },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.webSegment() },
);

const queryValue = fc.oneof(
  fc.constantFrom("1", "5", "50", "100", "0", "101", "true", "false", "", "abc"),
  fc.string().map(encodeURIComponent),
);
const queryArb = fc.oneof(
  fc.constant(""),
  fc
    .array(fc.tuple(fc.constantFrom("top", "limit", "cursor", "include_media", "x"), queryValue), {
      maxLength: 4,
    })
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`),
  fc.webQueryParameters().map((q) => `?${q}`),
);

/** Mostly the partner's valid key (so requests reach the deeper rules), sometimes anything else. */
const keyArb = fc.tuple(fc.nat(9), headerText).map(([pick, text]): string | null => {
  if (pick < 6) return keys.sandbox;
  return [keys.production, otherKey, null, text][pick - 6] ?? null;
});

const contentTypeArb = fc.tuple(fc.nat(9), headerText).map(([pick, text]): string | null => {
  if (pick < 7)
    return ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON"][pick % 3] ?? null;
  return [null, "text/plain", text][pick - 7] ?? null;
});

const fieldNames = [
  "email",
  "first_name",
  "phone_number",
  "address",
  "photos_processed",
  "media",
  "id",
  "taken_at",
  "latitude",
  "longitude",
  "media_type",
  "duration_seconds",
  "thumbnail_url",
];
const looseObject = fc.dictionary(fc.constantFrom(...fieldNames), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 5,
});

/** A field that is usually of the right type and sometimes anything at all. */
const mostly = <T>(arbitrary: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) });

const isoInstant = fc
  .date({ min: new Date("1890-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString());

const mediaItem = fc.record(
  {
    id: mostly(fc.string({ maxLength: 300 })),
    taken_at: mostly(fc.oneof(isoInstant, fc.string())),
    latitude: mostly(fc.double({ min: -100, max: 100, noNaN: true })),
    longitude: mostly(fc.double({ min: -200, max: 200, noNaN: true })),
    media_type: mostly(fc.constantFrom("photo", "video", "gif")),
    duration_seconds: mostly(fc.double({ noNaN: true, noDefaultInfinity: true })),
    thumbnail_url: mostly(fc.webUrl()),
  },
  { requiredKeys: [] },
);

const userBody = fc.record(
  {
    email: mostly(fc.oneof(fc.emailAddress(), fc.string())),
    first_name: mostly(fc.string({ maxLength: 210 })),
    phone_number: mostly(fc.string({ maxLength: 40 })),
    address: mostly(
      fc.record({ city: mostly(fc.string()), country: mostly(fc.string()) }, { requiredKeys: [] }),
    ),
  },
  { requiredKeys: [] },
);

const encoded = (arbitrary: fc.Arbitrary<unknown>) => arbitrary.map((v) => JSON.stringify(v));

const batchBody = encoded(fc.record({ media: fc.array(mediaItem, { maxLength: 6 }) }));
const syncBody = encoded(fc.record({ photos_processed: mostly(fc.nat()) }, { requiredKeys: [] }));

/** Any body at all: JSON of any shape, text that is not JSON, bytes that are not UTF-8, or none. */
const anyBody: fc.Arbitrary<string | Uint8Array | undefined> = fc.oneof(
  fc.constant(undefined),
  encoded(fc.jsonValue({ maxDepth: 3 })),
  encoded(looseObject),
  fc.string(),
  fc.uint8Array({ maxLength: 64 }),
);

/** Each route with its method and the body it expects, so most requests get past the early checks. */
const routes: {
  method: string;
  path: (user: string, event: string) => string;
  body: fc.Arbitrary<string>;
}[] = [
  { method: "GET", path: () => "/v1/ping", body: syncBody },
  { method: "GET", path: () => "/v1/health", body: syncBody },
  { method: "POST", path: () => "/v1/users", body: encoded(userBody) },
  { method: "POST", path: (u) => `/v1/users/${u}/media`, body: batchBody },
  { method: "POST", path: (u) => `/v1/users/${u}/sync-complete`, body: syncBody },
  { method: "GET", path: (u) => `/v1/users/${u}/events`, body: syncBody },
  { method: "GET", path: (u) => `/v1/users/${u}/stats`, body: syncBody },
  { method: "POST", path: (u, e) => `/v1/users/${u}/events/${e}/hide`, body: encoded(looseObject) },
  { method: "POST", path: (u, e) => `/v1/users/${u}/events/${e}/unhide`, body: encoded(looseObject) },
];

const anyMethod = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");

const targetArb = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(...routes).chain((route) =>
      fc.record({
        method: fc.constant(route.method),
        path: fc.tuple(userIdArb, eventIdArb).map(([u, e]) => route.path(u, e)),
        body: fc.oneof({ weight: 3, arbitrary: route.body }, { weight: 1, arbitrary: anyBody }),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      method: anyMethod,
      path: fc
        .tuple(fc.constantFrom(...routes), userIdArb, eventIdArb)
        .map(([route, u, e]) => route.path(u, e)),
      body: anyBody,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ method: anyMethod, path: fc.webPath().map((p) => `/v1${p}`), body: anyBody }),
  },
);

const requestArb = fc.record({
  target: targetArb,
  query: queryArb,
  key: keyArb,
  contentType: contentTypeArb,
  requestId: fc.option(headerText),
});

type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

async function send(request: FuzzRequest): Promise<Response> {
  const headers: Record<string, string> = {};
  if (request.key !== null) headers["x-partner-api-key"] = request.key;
  if (request.contentType !== null) headers["content-type"] = request.contentType;
  if (request.requestId !== null) headers["x-request-id"] = request.requestId;
  const { method, path, body } = request.target;
  const hasBody = method !== "GET" && method !== "HEAD";
  return fetch(server.baseUrl + path + request.query, {
    method,
    headers,
    body: hasBody ? body : undefined,
  });
}

test("no input makes the service fail or step outside the contract", async () => {
  await fc.assert(
    fc.asyncProperty(requestArb, async (request) => {
      const response = await send(request);
      const text = await response.text();
      const status = response.status;
      expect({ status, allowed: ALLOWED_STATUSES.has(status) }).toEqual({ status, allowed: true });
      expect(response.headers.get("x-request-id")).toBeString();
      if (status === 405) expect(response.headers.get("allow")).toBeString();
      if (request.target.method === "HEAD") return;
      expect(response.headers.get("content-type")).toStartWith("application/json");
      const body = JSON.parse(text);
      expect(typeof body).toBe("object");
      if (status < 400) return;
      const code = body?.error?.code as ErrorCode;
      expect({ code, status }).toEqual({ code, status: statusOf[code] });
      // The OpenAPI document lists this status, and this code under it, for the operation called: the
      // path as sent, after URL parsing removed its "." and ".." segments (a user id of "." is no user id).
      const sentPath = new URL(server.baseUrl + request.target.path).pathname;
      const answers = documented(request.target.method, sentPath);
      if (answers !== null) {
        const route = `${request.target.method} ${sentPath}`;
        expect({ route, status, code, documented: answers.get(status)?.includes(code) }).toEqual({
          route,
          status,
          code,
          documented: true,
        });
      }
      expect(typeof body.error.message).toBe("string");
      if (body.error.details !== undefined && body.error.details !== null)
        expect(typeof body.error.details).toBe("object");
    }),
    { numRuns: 500 },
  );
});
