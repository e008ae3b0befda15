import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let otherKey: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  otherKey = (await server.partner("globex")).sandbox;
});

afterAll(async () => {
  await server.close();
});

let emails = 0;
async function newUser(): Promise<string> {
  emails += 1;
  const response = await server.call("POST", "/v1/users", {
    key,
    body: { email: `sync${emails}@example.com` },
  });
  return response.body.user_id;
}

const syncComplete = (userId: string, body?: unknown, apiKey = key) =>
  server.call("POST", `/v1/users/${userId}/sync-complete`, { key: apiKey, body });

/** What a media batch with accepted items leaves behind (the ingest path sets this flag). */
const receiveMedia = (userId: string) =>
  server.store.rows(sql`update users set received_since_sync = true where id = ${userId}`);

const receivedFlag = async (userId: string) =>
  (
    await server.store.rows<{ r: boolean }>(
      sql`select received_since_sync as r from users where id = ${userId}`,
    )
  )[0]?.r;

describe("POST /v1/users/{user_id}/sync-complete", () => {
  test("a scan that received nothing leaves has_synced false and still advances last_sync_at", async () => {
    const userId = await newUser();
    const response = await syncComplete(userId);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["has_synced", "last_sync_at"]);
    expect(response.body.has_synced).toBe(false);
    expect(response.body.last_sync_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("photos_processed > 0 sets has_synced, with or without media received", async () => {
    const userId = await newUser();
    const response = await syncComplete(userId, { photos_processed: 1 });
    expect(response.body.has_synced).toBe(true);
  });

  test("omitted photos_processed infers from media received since the previous sync-complete", async () => {
    const userId = await newUser();
    await receiveMedia(userId);
    const response = await syncComplete(userId, {});
    expect(response.body.has_synced).toBe(true);
    expect(await receivedFlag(userId)).toBe(false);
  });

  test("a batch whose items were accepted, even unmatched, counts as media received", async () => {
    const userId = await newUser();
    const rejectedOnly = await server.call("POST", `/v1/users/${userId}/media`, {
      key,
      body: { media: [{ id: "no-time", latitude: 1, longitude: 1 }] },
    });
    expect(rejectedOnly.body.accepted).toBe(0);
    expect((await syncComplete(userId)).body.has_synced).toBe(false);
    const batch = await server.call("POST", `/v1/users/${userId}/media`, {
      key,
      body: { media: [{ id: "far-away", taken_at: "2024-01-01T00:00:00Z", latitude: -60, longitude: 10 }] },
    });
    expect([batch.status, batch.body.accepted, batch.body.matched]).toEqual([200, 1, 0]);
    const sync = await syncComplete(userId);
    expect(sync.body.has_synced).toBe(true);
    expect(Date.parse(sync.body.last_sync_at)).toBeGreaterThanOrEqual(Date.parse(batch.body.last_sync_at));
  });

  test("photos_processed 0 never sets has_synced and closes the scan", async () => {
    const userId = await newUser();
    await receiveMedia(userId);
    expect((await syncComplete(userId, { photos_processed: 0 })).body.has_synced).toBe(false);
    // The media belonged to the scan just closed: the next scan starts from nothing.
    expect((await syncComplete(userId)).body.has_synced).toBe(false);
  });

  test("each sync-complete closes the scan: media before one call do not count for the next", async () => {
    const userId = await newUser();
    await receiveMedia(userId);
    await syncComplete(userId, { photos_processed: 0 });
    expect(await receivedFlag(userId)).toBe(false);
    await receiveMedia(userId);
    expect((await syncComplete(userId)).body.has_synced).toBe(true);
  });

  test("has_synced never returns to false", async () => {
    const userId = await newUser();
    await syncComplete(userId, { photos_processed: 10 });
    expect((await syncComplete(userId, { photos_processed: 0 })).body.has_synced).toBe(true);
    expect((await syncComplete(userId)).body.has_synced).toBe(true);
  });

  test("last_sync_at advances on every call, visibly even within one millisecond, and never moves backwards", async () => {
    const userId = await newUser();
    const marks: number[] = [];
    for (let i = 0; i < 10; i += 1) marks.push(Date.parse((await syncComplete(userId)).body.last_sync_at));
    for (let i = 1; i < marks.length; i += 1) expect(marks[i]).toBeGreaterThan(marks[i - 1] ?? 0);
    // A mark ahead of this call's clock (a concurrent batch on an instance whose clock runs ahead) is
    // not moved back: the call advances it by the millisecond a response can show.
    const ahead = new Date(Date.now() + 3_600_000);
    await server.store.rows(sql`update users set last_sync_at = ${ahead.toISOString()} where id = ${userId}`);
    expect((await syncComplete(userId)).body.last_sync_at).toBe(new Date(ahead.getTime() + 1).toISOString());
  });

  test("the state shows in stats", async () => {
    const userId = await newUser();
    const sync = await syncComplete(userId, { photos_processed: 3 });
    const stats = await server.call("GET", `/v1/users/${userId}/stats`, { key });
    expect([stats.body.has_synced, stats.body.last_sync_at]).toEqual([true, sync.body.last_sync_at]);
  });

  test("concurrent calls all succeed and the inferred answer is kept", async () => {
    const userId = await newUser();
    await receiveMedia(userId);
    const responses = await Promise.all(Array.from({ length: 10 }, () => syncComplete(userId)));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    // The updates serialize on the row: the first turns has_synced on and every later one keeps it.
    expect(responses.every((r) => r.body.has_synced)).toBe(true);
    expect((await syncComplete(userId, { photos_processed: 0 })).body.has_synced).toBe(true);
  });

  test("an empty body counts as {} and unknown fields are ignored", async () => {
    const userId = await newUser();
    const empty = await server.call("POST", `/v1/users/${userId}/sync-complete`, { key, rawBody: "" });
    expect(empty.status).toBe(200);
    expect((await syncComplete(userId, { photos_processed: 2, scan_id: "abc" })).body.has_synced).toBe(true);
  });

  test("photos_processed that is not an integer >= 0 is invalid_request", async () => {
    const userId = await newUser();
    for (const value of [-1, 1.5, "3", true, [], {}, null]) {
      const response = await syncComplete(userId, { photos_processed: value });
      expect([value, response.status, response.body.error?.code]).toEqual([value, 400, "invalid_request"]);
    }
    for (const body of [[], "x", null, 3]) {
      const response = await syncComplete(userId, body);
      expect([body, response.status, response.body.error?.code]).toEqual([body, 400, "invalid_request"]);
    }
    const huge = await server.call("POST", `/v1/users/${userId}/sync-complete`, {
      key,
      rawBody: '{"photos_processed": 1e400}',
      headers: { "content-type": "application/json" },
    });
    expect([huge.status, huge.body.error.code]).toEqual([400, "invalid_request"]);
    // Nothing was changed by the refused calls.
    expect((await syncComplete(userId)).body.has_synced).toBe(false);
  });

  test("an unknown user, or another partner's, is user_not_found", async () => {
    const userId = await newUser();
    for (const [id, apiKey] of [
      ["00000000-0000-4000-8000-000000000000", key],
      [userId, otherKey],
    ] as const) {
      const response = await syncComplete(id, { photos_processed: 5 }, apiKey);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("user_not_found");
    }
    expect((await syncComplete(userId)).body.has_synced).toBe(false);
  });
});
