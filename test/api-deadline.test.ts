/**
 * Nothing outlives its request (docs/api.md §1, docs/operations.md "Requests that run out of time"):
 * with the database held past the deadline, every route answers by it and leaves no statement,
 * transaction or connection behind; exports are bounded and a reader that stops costs only its export.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { REQUEST_DEADLINE_MS } from "../src/http/server.ts";
import { oldestTransactionSeconds } from "../src/store/activity.ts";
import { seedCatalog } from "./support/catalogFixtures.ts";
import { lockTable, readUpTo, serviceActivity, statusOf } from "./support/heldTransactions.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const EXPORT_DEADLINE_SECONDS = 8;
let server: TestServer;
type Partner = "acme" | "globex" | "initech" | "umbrella";
const keys = {} as Record<Partner, string>;
const users = {} as Record<Partner, string>;

const at = { latitude: 40.75, longitude: -73.99 };
const photo = (id: string) => ({ id, taken_at: "2025-07-04T21:00:00Z", ...at });

/** A user of `partner` keeping `bulk` items at event 100 besides the one sent (copied in SQL, for speed). */
async function userWithItems(partner: Partner, bulk: number): Promise<string> {
  const created = await server.call("POST", "/v1/users", {
    key: keys[partner],
    body: { email: `${partner}.${bulk}.${Math.random()}@example.com` },
  });
  const userId: string = created.body.user_id;
  const sent = await server.call("POST", `/v1/users/${userId}/media`, {
    key: keys[partner],
    body: { media: [photo("seed")] },
  });
  expect(sent.body.matched).toBe(1);
  await server.store.rows(
    sql`insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude, media_type, thumbnail_url)
        select user_id, 'bulk-' || g, event_id, venue_id, taken_at + g * interval '1 ms', latitude, longitude,
               media_type, 'https://cdn.example/' || repeat('t', 300)
        from media, generate_series(1, ${bulk}) g where user_id = ${userId}::uuid and media_id = 'seed'`,
  );
  return userId;
}

async function settled(): Promise<{ state: string; query: string }[]> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const activity = await serviceActivity(server);
    if (activity.length === 0) return activity;
    await Bun.sleep(100);
  }
  return serviceActivity(server);
}

beforeAll(async () => {
  server = await startTestServer({ EXPORT_DEADLINE_SECONDS: String(EXPORT_DEADLINE_SECONDS) });
  for (const partner of ["acme", "globex", "initech", "umbrella"] as const) {
    keys[partner] = (await server.partner(partner)).sandbox;
  }
  await seedCatalog(server, {
    venues: [{ id: 1, ...at, name: "Garden", city: "New York", region: "NY", country: "US" }],
    performers: [],
    events: [{ id: 100, venueId: 1, startsAtLocal: "2025-07-04T20:00:00" }],
  });
  users.acme = await userWithItems("acme", 40_000);
  users.globex = await userWithItems("globex", 40_000);
  users.initech = await userWithItems("initech", 40_000);
  users.umbrella = await userWithItems("umbrella", 0);
}, 120_000);

afterAll(async () => {
  await server.close();
});

describe("requests that pass their deadline", () => {
  test("with users locked past the deadline, every route answers by it and then holds nothing", async () => {
    const key = keys.umbrella;
    const userId = users.umbrella;
    const doomed = (await server.call("POST", "/v1/users", { key, body: { email: "doomed@example.com" } }))
      .body.user_id;
    const unlock = await lockTable(server.database.url, "users");
    const started = performance.now();
    const calls: [string, string, unknown?][] = [
      ["POST", "/v1/users", { email: "new@example.com" }],
      ["POST", `/v1/users/${userId}/media`, { media: [photo("during-lock")] }],
      ["POST", `/v1/users/${userId}/media/delete`, { ids: ["seed"] }],
      ["POST", `/v1/users/${userId}/sync-complete`, { photos_processed: 1 }],
      ["GET", `/v1/users/${userId}/events`],
      ["GET", `/v1/users/${userId}/stats`],
      ["POST", `/v1/users/${userId}/events/100/hide`],
      ["GET", `/v1/users/${userId}/export`],
      ["DELETE", `/v1/users/${doomed}`],
    ];
    let answers: { status: number; code: string; ms: number }[];
    try {
      answers = await Promise.all(
        calls.map(async ([method, path, body]) => {
          const answer = await server.call(method, path, { key, body });
          return { status: answer.status, code: answer.body?.error?.code, ms: performance.now() - started };
        }),
      );
      // Called off while the lock still stands: nothing of the service waits on it any more.
      expect(await settled()).toEqual([]);
    } finally {
      await unlock();
    }
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 500, code: "internal_error" });
      expect(answer.ms).toBeGreaterThanOrEqual(REQUEST_DEADLINE_MS - 50);
      expect(answer.ms).toBeLessThan(REQUEST_DEADLINE_MS + 1500);
    }
    expect(await settled()).toEqual([]);
    // The statements were called off, not left to run once the lock went: the erasure never happened.
    const [left] = await server.store.rows<{ n: number }>(
      sql`select count(*)::int as n from users where id = ${doomed}::uuid`,
    );
    expect(left?.n).toBe(1);
    // Every connection came back: as many reads at once as the pools hold, and more, all answered.
    const pages = await Promise.all(
      Array.from({ length: 24 }, () => server.call("GET", `/v1/users/${userId}/events`, { key })),
    );
    expect(pages.map((page) => page.status)).toEqual(Array(24).fill(200));
    const exported = await server.call("GET", `/v1/users/${userId}/export`, { key });
    expect(exported.status).toBe(200);
  }, 30_000);

  test("an export whose reader stops is ended at its deadline, its snapshot and connection let go", async () => {
    const reader = await readUpTo(server.baseUrl, `/v1/users/${users.acme}/export`, keys.acme, 4096);
    expect(statusOf(reader.received())).toBe(200);
    await Bun.sleep(1000);
    // The export holds its snapshot while the reader is away, and says so.
    expect(await oldestTransactionSeconds(server.store)).toBeGreaterThan(0.5);
    await Bun.sleep(EXPORT_DEADLINE_SECONDS * 1000);
    expect(await settled()).toEqual([]);
    expect(await oldestTransactionSeconds(server.store)).toBe(0);
    reader.resume();
    await reader.closed;
    // The document stops short of its end: a reader can tell it did not complete.
    expect(reader.received().toString("latin1")).not.toContain('"hidden_event_ids"');
  }, 30_000);
});

describe("exports are bounded", () => {
  test("30 stalled exports take at most two slots a partner and the instance's share; batches stay fast", async () => {
    const partners: Partner[] = ["acme", "globex", "initech"];
    const readers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const partner = partners[i % 3] as Partner;
        return readUpTo(server.baseUrl, `/v1/users/${users[partner]}/export`, keys[partner], 1024).then(
          (reader) => ({ partner, reader }),
        );
      }),
    );
    try {
      const running = readers.filter(({ reader }) => statusOf(reader.received()) === 200);
      const refused = readers.filter(({ reader }) => statusOf(reader.received()) === 429);
      expect(running.length + refused.length).toBe(30);
      expect(running.length).toBeGreaterThanOrEqual(1);
      expect(running.length).toBeLessThanOrEqual(4);
      for (const partner of partners) {
        expect(running.filter((r) => r.partner === partner).length).toBeLessThanOrEqual(2);
      }
      for (const { reader } of refused) {
        const text = reader.received().toString("latin1");
        expect(text).toMatch(/\r\nretry-after: \d+\r\n/i);
        expect(text).toContain('"code":"rate_limited"');
      }
      // Another partner's batches and history, while the exports sit on their connections.
      const key = keys.umbrella;
      const slowest = { ms: 0 };
      for (let round = 0; round < 10; round++) {
        const answers = await Promise.all(
          Array.from({ length: 4 }, async (_, i) => {
            const startedMs = performance.now();
            const answer = await server.call("POST", `/v1/users/${users.umbrella}/media`, {
              key,
              body: { media: [photo(`batch-${round}-${i}`)] },
            });
            slowest.ms = Math.max(slowest.ms, performance.now() - startedMs);
            return answer.status;
          }),
        );
        expect(answers).toEqual([200, 200, 200, 200]);
      }
      expect(slowest.ms).toBeLessThan(2000);
    } finally {
      for (const { reader } of readers) reader.destroy();
    }
    // Readers that went away gave everything back at once.
    expect(await settled()).toEqual([]);
    const whole = await server.call("GET", `/v1/users/${users.globex}/export`, { key: keys.globex });
    expect([whole.status, whole.body.media.length]).toEqual([200, 40_001]);
  }, 60_000);
});
