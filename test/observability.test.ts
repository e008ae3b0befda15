/** What an operator sees of a running server: metrics, the access log, the probes (docs/operations.md §10). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Metrics } from "../src/observability/metrics.ts";
import { createUser, seedCatalog, sendMedia } from "./support/catalogFixtures.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const AT_VENUE = { latitude: 40.75, longitude: -73.99 };
const EMAIL = "watched.person@example.com";

let server: TestServer;
let key: string;
let userId: string;
let ready = true;
const metrics = new Metrics();
const logged: { event: string; fields: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      metrics,
      log: (event, fields = {}) => logged.push({ event, fields }),
      readiness: () =>
        ready ? { ready: true, reasons: [] } : { ready: false, reasons: ["database_unavailable"] },
    },
  );
  key = (await server.partner("acme")).sandbox;
  await seedCatalog(server, {
    venues: [{ id: 1, ...AT_VENUE, name: "Garden" }],
    events: [{ id: 100, venueId: 1, startsAtLocal: "2025-07-04T20:00:00" }],
  });
  await server.reloadCatalog();
  userId = await createUser(server, key, EMAIL);
  const response = await sendMedia(server, key, userId, [
    { id: "a", taken_at: "2025-07-05T01:00:00Z", ...AT_VENUE },
    { id: "b", taken_at: "2025-07-05T01:05:00Z", latitude: 0, longitude: 0 },
    { id: "c", taken_at: "2025-07-05T01:05:00Z" },
    { id: "d", latitude: 1, longitude: 1 },
  ]);
  expect(response.body).toMatchObject({ accepted: 2, matched: 1 });
  await server.call("GET", `/v1/users/${userId}/events`, { key });
  await server.call("GET", `/v1/users/${userId}/events`, { key });
  await server.call("GET", "/v1/no-such-path", { key });
});

afterAll(async () => {
  await server.close();
});

/** The value of one sample of the exposition, by metric name and exact label text. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("metrics", () => {
  test("requests by route pattern, method and status; items by outcome and reason; cache lookups", async () => {
    const { body } = await metrics.exposition();
    const media = 'route="/v1/users/:user_id/media",method="POST",status="200"';
    expect(sample(body, "rollcall_http_requests_total", media)).toBe(1);
    const events = 'route="/v1/users/:user_id/events",method="GET",status="200"';
    expect(sample(body, "rollcall_http_requests_total", events)).toBe(2);
    const unknown = 'route="unmatched",method="GET",status="404"';
    expect(sample(body, "rollcall_http_requests_total", unknown)).toBe(1);
    expect(sample(body, "rollcall_media_items_total", 'outcome="accepted",reason=""')).toBe(2);
    expect(sample(body, "rollcall_media_items_total", 'outcome="matched",reason=""')).toBe(1);
    expect(
      sample(body, "rollcall_media_items_total", 'outcome="rejected",reason="missing_coordinates"'),
    ).toBe(1);
    expect(sample(body, "rollcall_media_items_total", 'outcome="rejected",reason="missing_taken_at"')).toBe(
      1,
    );
    const hits = sample(body, "rollcall_cache_lookups_total", 'cache="event_facts",result="hit"') ?? 0;
    const misses = sample(body, "rollcall_cache_lookups_total", 'cache="event_facts",result="miss"') ?? 0;
    expect(hits + misses).toBeGreaterThan(0);
  });

  test("no label carries a user id, a key or an email", async () => {
    const { body } = await metrics.exposition();
    expect(body).not.toContain(userId);
    expect(body).not.toContain(key);
    expect(body).not.toContain(EMAIL);
  });

  test("a 429 counts against its budget", async () => {
    const limitedMetrics = new Metrics();
    const limited = await startTestServer(
      { RATE_LIMIT_ENABLED: "true", RATE_LIMIT_READ: "1" },
      { database: server.database, metrics: limitedMetrics },
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await limited.call("GET", `/v1/users/${userId}/stats`, { key })).status);
      }
      expect(statuses).toEqual([200, 429, 429]);
      const { body } = await limitedMetrics.exposition();
      expect(sample(body, "rollcall_rate_limited_total", 'budget="read"')).toBe(2);
    } finally {
      await limited.close();
    }
  });
});

describe("access log", () => {
  test("one line per request with its id, partner, key id, route, status, duration and items; nothing private", () => {
    const lines = logged.filter((line) => line.event === "request");
    const batch = lines.find((line) => line.fields["route"] === "/v1/users/:user_id/media");
    expect(batch?.fields).toMatchObject({ partner: "acme", method: "POST", status: 200, items: 4 });
    expect(batch?.fields["keyId"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof batch?.fields["requestId"]).toBe("string");
    expect(typeof batch?.fields["durationMs"]).toBe("number");
    const text = JSON.stringify(lines);
    for (const secret of [key, EMAIL, "40.75", "-73.99"]) expect(text).not.toContain(secret);
  });
});

describe("probes", () => {
  test("/livez and /readyz answer outside /v1 with no key; /readyz says why it is not ready", async () => {
    expect(await server.call("GET", "/livez")).toMatchObject({ status: 200, body: { status: "ok" } });
    expect(await server.call("GET", "/readyz")).toMatchObject({ status: 200, body: { status: "ready" } });
    ready = false;
    try {
      expect(await server.call("GET", "/readyz")).toMatchObject({
        status: 503,
        body: { status: "not_ready", reasons: ["database_unavailable"] },
      });
    } finally {
      ready = true;
    }
  });
});
