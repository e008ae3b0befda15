/**
 * docs/api.md §16 on the wire: deleting media, erasing a user, exporting one. What a deletion leaves
 * is compared whole with what the partner saw before the items were sent; bad input gets the
 * documented error and changes nothing.
 */
import { describe, expect, test } from "bun:test";
import { createUser } from "./support/catalogFixtures.ts";
import {
  AT_VENUE_1,
  AT_VENUE_2,
  DURING_100,
  DURING_200,
  mediaTestFile,
  photo,
} from "./support/mediaCatalog.ts";
import { userRoutes } from "./support/routes.ts";
import { startTestServer } from "./support/server.ts";
import { rowsHolding, userState } from "./support/userState.ts";

const fixture = mediaTestFile();

const call = (method: string, path: string, body?: unknown, key = fixture.key) =>
  fixture.server.call(method, path, { key, body });
const deleteIds = (userId: string, ids: unknown, key = fixture.key) =>
  call("POST", `/v1/users/${userId}/media/delete`, { ids }, key);

/** What the partner can read of a user, history with every item and stats, and the stored lists. */
async function seen(userId: string) {
  const history = await call("GET", `/v1/users/${userId}/events?limit=100`);
  const stats = await call("GET", `/v1/users/${userId}/stats?top=50`);
  expect([history.status, stats.status]).toEqual([200, 200]);
  return { history: history.body, stats: stats.body, stored: await userState(fixture.server.store, userId) };
}

const at = (minute: number) => `2025-07-04T21:${String(minute).padStart(2, "0")}:00Z`;

describe("POST /v1/users/{user_id}/media/delete", () => {
  test("deleting the items of a batch restores history, stats and stored lists as they were", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [
      photo("old-1", at(1)),
      photo("old-2", at(2), AT_VENUE_1, { media_type: "video" }),
    ]);
    const before = await seen(userId);
    const sent = await fixture.send(userId, [
      photo("new-1", at(3)),
      photo("new-2", at(4), AT_VENUE_1, { thumbnail_url: "https://t.example/2.jpg" }),
      photo("new-3", DURING_200, AT_VENUE_2),
    ]);
    expect(sent.body.matched).toBe(3);
    const afterSend = await seen(userId);
    expect(afterSend.stats.events_count).toBe(2);

    const response = await deleteIds(userId, ["new-3", "unknown", "new-1", "new-3", "new-2"]);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ deleted: ["new-3", "new-1", "new-2"], not_found: ["unknown"] });
    const after = await seen(userId);
    expect(after.history).toEqual(before.history);
    // The sync mark is the send's: a deletion does not move it.
    expect(after.stats).toEqual({ ...before.stats, last_sync_at: afterSend.stats.last_sync_at });
    // Event 200 keeps an empty history row (its hidden flag would survive), as after a re-evaluation.
    expect(after.stored.events.filter((e) => e.event_id !== 200)).toEqual(before.stored.events);
    expect(after.stored.events.find((e) => e.event_id === 200)).toMatchObject({
      media_count: 0,
      media_json: "[]",
    });
    expect(after.stored.media).toEqual(before.stored.media);
    expect(after.stored.user).toEqual(afterSend.stored.user);
  });

  test("a deleted event hidden before stays hidden when media there is sent again", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100)]);
    expect((await call("POST", `/v1/users/${userId}/events/100/hide`)).status).toBe(200);
    await deleteIds(userId, ["a"]);
    await fixture.send(userId, [photo("a", DURING_100)]);
    expect((await call("GET", `/v1/users/${userId}/events`)).body.events).toEqual([]);
    expect((await call("GET", `/v1/users/${userId}/stats`)).body.events_count).toBe(0);
  });

  test("bad input gets the documented error and changes nothing", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("keep", DURING_100)]);
    const before = await seen(userId);
    const tooMany = Array.from({ length: 201 }, (_, i) => `id-${i}`);
    const cases: [unknown, number, string, unknown][] = [
      [{}, 400, "invalid_request", { fields: [{ field: "ids", reason: "required" }] }],
      [{ ids: "keep" }, 400, "invalid_request", { fields: [{ field: "ids", reason: "type" }] }],
      [{ ids: [] }, 400, "empty_batch", undefined],
      [{ ids: tooMany }, 413, "invalid_batch_size", { received: 201 }],
      [{ ids: [...tooMany.slice(1), 5] }, 413, "invalid_batch_size", { received: 201 }],
      [
        { ids: ["keep", 5, "", "x".repeat(256), null, "ok"] },
        400,
        "invalid_request",
        {
          fields: [
            { field: "ids.1", reason: "type" },
            { field: "ids.2", reason: "required" },
            { field: "ids.3", reason: "max_length" },
            { field: "ids.4", reason: "type" },
          ],
        },
      ],
    ];
    for (const [body, status, code, details] of cases) {
      const response = await call("POST", `/v1/users/${userId}/media/delete`, body);
      expect([response.status, response.body.error?.code, response.body.error?.details]).toEqual([
        status,
        code,
        details,
      ]);
    }
    const malformed = await fixture.server.call("POST", `/v1/users/${userId}/media/delete`, {
      key: fixture.key,
      rawBody: '{"ids": ["keep", "a\\u0000b", "\\ud800"]}',
      headers: { "content-type": "application/json" },
    });
    expect(malformed.body.error).toMatchObject({
      code: "invalid_request",
      details: {
        fields: [
          { field: "ids.1", reason: "type" },
          { field: "ids.2", reason: "type" },
        ],
      },
    });
    expect((await deleteIds(userId, ["keep"], fixture.otherKey)).body.error.code).toBe("user_not_found");
    expect((await call("POST", "/v1/users/not-a-uuid/media/delete", { ids: ["keep"] })).status).toBe(400);
    expect(await seen(userId)).toEqual(before);
  });
});

describe("DELETE /v1/users/{user_id}", () => {
  test("erases everything stored for the user, frees the email, and every later call is 404", async () => {
    const email = "erase-me@example.com";
    const userId = await createUser(fixture.server, fixture.key, email);
    await fixture.send(userId, [photo("a", DURING_100), photo("b", DURING_200, AT_VENUE_2)]);
    await call("POST", `/v1/users/${userId}/events/100/hide`);
    await call("POST", `/v1/users/${userId}/sync-complete`, {});

    expect((await call("DELETE", `/v1/users/${userId}`, undefined, fixture.otherKey)).status).toBe(404);
    expect((await call("GET", `/v1/users/${userId}/stats`)).status).toBe(200);
    const erased = await call("DELETE", `/v1/users/${userId.toUpperCase()}`);
    expect([erased.status, erased.body]).toEqual([200, { user_id: userId, deleted: true }]);
    expect(await rowsHolding(fixture.server.store, userId)).toEqual([]);
    for (const route of userRoutes(userId)) {
      const response = await call(route.method, route.path, route.body);
      expect([route.method, route.path, response.body.error?.code]).toEqual([
        route.method,
        route.path,
        "user_not_found",
      ]);
    }
    const again = await call("POST", "/v1/users", { email });
    expect(again.status).toBe(201);
    expect(again.body.user_id).not.toBe(userId);
  });

  test("bad input gets the documented error and erases nothing", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100)]);
    const before = await seen(userId);
    const malformed = await call("DELETE", "/v1/users/not-a-uuid");
    expect(malformed.body.error).toEqual({
      code: "invalid_request",
      message: expect.any(String),
      details: { fields: [{ field: "user_id", reason: "type" }] },
    });
    expect((await call("DELETE", "/v1/users/3f2504e0-4f89-41d3-9a0c-0305e82c3301")).status).toBe(404);
    expect((await call("DELETE", `/v1/users/${userId}`, undefined, fixture.otherKey)).status).toBe(404);
    expect((await fixture.server.call("DELETE", `/v1/users/${userId}`, { key: null })).status).toBe(401);
    expect((await call("PUT", `/v1/users/${userId}`)).headers.get("allow")).toBe("DELETE");
    expect(await seen(userId)).toEqual(before);
  });

  test("a batch racing the erasure is answered 200 or 404, and nothing of the user remains", async () => {
    for (let round = 0; round < 25; round++) {
      const userId = await fixture.newUser();
      await fixture.send(userId, [photo("seed", DURING_100)]);
      const batch = [photo(`r-${round}`, DURING_200, AT_VENUE_2), photo("seed", at(5))];
      const [sent, erased] = await Promise.all([
        fixture.send(userId, batch),
        call("DELETE", `/v1/users/${userId}`),
      ]);
      expect(erased.status).toBe(200);
      expect([200, 404]).toContain(sent.status);
      expect(await rowsHolding(fixture.server.store, userId)).toEqual([]);
    }
  });
});

describe("budgets", () => {
  test("a deletion spends ingest, an erasure write, an export read", async () => {
    const limited = await startTestServer({
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_INGEST: "7",
      RATE_LIMIT_READ: "8",
      RATE_LIMIT_WRITE: "9",
    });
    try {
      const key = (await limited.partner("acme")).sandbox;
      const user = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
      const policies = [];
      for (const [method, path, body] of [
        ["POST", `/v1/users/${user}/media/delete`, { ids: ["a"] }],
        ["DELETE", `/v1/users/${user}`, undefined],
        ["GET", `/v1/users/${user}/export`, undefined],
      ] as const) {
        const response = await limited.call(method, path, { key, body });
        policies.push([response.status, response.headers.get("ratelimit-policy")]);
      }
      expect(policies).toEqual([
        [404, `"ingest";q=7;w=60`],
        [404, `"write";q=9;w=60`],
        [404, `"read";q=8;w=60`],
      ]);
    } finally {
      await limited.close();
    }
  });
});
