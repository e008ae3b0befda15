/**
 * GET /v1/users/{user_id}/export (docs/api.md §16): the document round-trips what was sent, is streamed,
 * and a client that stops reading midway leaves no connection or transaction behind.
 */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { AT_VENUE_2, DURING_100, mediaTestFile, photo } from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

const exportOf = (userId: string, key = fixture.key) =>
  fixture.server.call("GET", `/v1/users/${userId}/export`, { key });

/**
 * An export of the user, asked again while the partner's two slots are still being given back by the
 * exports whose clients just left (a few milliseconds), as a client heeding the 429 would; at most 1 s.
 */
async function exportOnceFree(userId: string, signal?: AbortSignal): Promise<Response> {
  const started = performance.now();
  for (;;) {
    const response = await fetch(`${fixture.server.baseUrl}/v1/users/${userId}/export`, {
      headers: { "x-partner-api-key": fixture.key },
      signal,
    });
    if (response.status !== 429 || performance.now() - started > 1000) return response;
    await response.arrayBuffer();
    await Bun.sleep(20);
  }
}

describe("GET /v1/users/{user_id}/export", () => {
  test("every member sent comes back as stored, in a document of the documented shape", async () => {
    const profile = {
      email: "  Porter@Example.com ",
      partner_user_id: "partner-42",
      first_name: "Ana",
      last_name: "Ölz",
      phone_number: " +49 30 1234567 ",
      address: { line1: "Hauptstr. 1", city: "Berlin", country: "DE", line2: null, unknown: "dropped" },
    };
    const created = await fixture.server.call("POST", "/v1/users", { key: fixture.key, body: profile });
    const userId: string = created.body.user_id;
    const full = {
      id: "IMG_0001 ✨",
      taken_at: "2025-08-01T22:00:00.1234567+02:00",
      latitude: AT_VENUE_2.latitude,
      longitude: AT_VENUE_2.longitude,
      media_type: "video",
      filename: "IMG_0001.MOV",
      duration_seconds: 7.25,
      thumbnail_url: 'https://t.example/1.jpg?x="1"',
      device_make: "Apple",
      device_model: "iPhone 15",
      device_lens_model: "back camera 6.86mm f/1.78",
    };
    const sent = await fixture.send(userId, [
      photo("plain", DURING_100),
      full,
      photo("unmatched", "2020-01-01T00:00:00Z"),
    ]);
    expect(sent.body.matched).toBe(2);
    await fixture.server.call("POST", `/v1/users/${userId}/events/200/hide`, { key: fixture.key });
    const stats = (await fixture.server.call("GET", `/v1/users/${userId}/stats`, { key: fixture.key })).body;

    const response = await exportOf(userId);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(response.body).toEqual({
      user: {
        user_id: userId,
        email: "Porter@Example.com",
        partner_user_id: "partner-42",
        first_name: "Ana",
        last_name: "Ölz",
        phone_number: "+49 30 1234567",
        address: { line1: "Hauptstr. 1", city: "Berlin", country: "DE" },
        created_at: created.body.created_at,
      },
      sync: { has_synced: false, last_sync_at: stats.last_sync_at },
      media: [
        {
          media_id: "plain",
          taken_at: "2025-07-04T21:00:00.000Z",
          latitude: 40.75,
          longitude: -73.99,
          media_type: "photo",
          filename: null,
          duration_seconds: null,
          thumbnail_url: null,
          device_make: null,
          device_model: null,
          device_lens_model: null,
          event_id: 100,
          venue_id: 1,
        },
        {
          media_id: full.id,
          taken_at: "2025-08-01T20:00:00.123Z",
          latitude: full.latitude,
          longitude: full.longitude,
          media_type: "video",
          filename: full.filename,
          duration_seconds: 7.25,
          thumbnail_url: full.thumbnail_url,
          device_make: "Apple",
          device_model: "iPhone 15",
          device_lens_model: full.device_lens_model,
          event_id: 200,
          venue_id: 2,
        },
      ],
      hidden_event_ids: [200],
    });
  });

  test("items microseconds apart, across a page's end, come once each, in order, with milliseconds", async () => {
    const userId = await fixture.newUser();
    // 150 items within one millisecond: pages of 100 end between two of them.
    const ids = Array.from({ length: 150 }, (_, i) => `same-ms-${String(i).padStart(3, "0")}`);
    const sent = await fixture.send(
      userId,
      ids.map((id, i) => photo(id, `2025-07-04T21:00:00.000${String(i + 1).padStart(3, "0")}Z`)),
    );
    expect(sent.body.matched).toBe(150);
    const { media } = (await exportOf(userId)).body as { media: { media_id: string; taken_at: string }[] };
    expect(media.map((item) => item.media_id)).toEqual(ids);
    expect(new Set(media.map((item) => item.taken_at))).toEqual(new Set(["2025-07-04T21:00:00.000Z"]));
  });

  test("a user without media exports an empty list; unknown, foreign and malformed ids are refused", async () => {
    const userId = await fixture.newUser();
    const empty = await exportOf(userId);
    expect(empty.body.media).toEqual([]);
    expect(empty.body.sync).toEqual({ has_synced: false, last_sync_at: null });
    expect((await exportOf(userId, fixture.otherKey)).body.error.code).toBe("user_not_found");
    expect((await exportOf("3f2504e0-4f89-41d3-9a0c-0305e82c3301")).body.error.code).toBe("user_not_found");
    expect((await exportOf("not-a-uuid")).body.error.details).toEqual({
      fields: [{ field: "user_id", reason: "type" }],
    });
  });

  test("clients that stop reading midway leave no connection or transaction behind", async () => {
    const userId = await fixture.newUser();
    const items = Array.from({ length: 3000 }, (_, i) =>
      photo(
        `item-${i}`,
        `2025-07-04T21:${String(i % 60).padStart(2, "0")}:${String(i % 59).padStart(2, "0")}Z`,
      ),
    );
    for (let i = 0; i < items.length; i += 200) {
      expect((await fixture.send(userId, items.slice(i, i + 200))).status).toBe(200);
    }
    // More abandoned exports than the pool has connections: each must give its connection back.
    for (let round = 0; round < 14; round++) {
      const controller = new AbortController();
      const response = await exportOnceFree(userId, controller.signal);
      expect(response.status).toBe(200);
      const reader = response.body?.getReader();
      await reader?.read();
      controller.abort();
      await reader?.cancel().catch(() => {});
    }
    const whole = await exportOnceFree(userId);
    expect(whole.status).toBe(200);
    expect(((await whole.json()) as { media: unknown[] }).media).toHaveLength(3000);
    await Bun.sleep(200);
    const open = await fixture.server.store.rows<{ n: number }>(
      sql`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(open[0]?.n).toBe(0);
  });
});
