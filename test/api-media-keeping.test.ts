/** POST /v1/users/{user_id}/media: the batch response, and what is kept, replaced and removed. */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import {
  AT_VENUE_1,
  AT_VENUE_2,
  DURING_100,
  DURING_101,
  DURING_200,
  mediaTestFile,
  NOWHERE,
  photo,
} from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

describe("batch response", () => {
  test("matches, events fully expanded, and the accepted flag for sync-complete", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("late", "2025-07-04T23:00:00Z", AT_VENUE_1, { thumbnail_url: "https://cdn.example/late.jpg" }),
      photo("early", "2025-07-04T19:00:00+00:00", AT_VENUE_1, {
        media_type: "video",
        duration_seconds: 12.5,
      }),
      photo("unlicensed", DURING_101),
      photo("nowhere", DURING_100, NOWHERE),
    ]);
    expect(response.status).toBe(200);
    const body = response.body;
    expect(Object.keys(body).sort()).toEqual([
      "accepted",
      "events",
      "last_sync_at",
      "matched",
      "matches",
      "rejected",
    ]);
    expect(body.accepted).toBe(4);
    expect(body.matched).toBe(2);
    expect(body.rejected).toEqual([]);
    expect([...body.matches].sort((a, b) => a.media_id.localeCompare(b.media_id))).toEqual([
      { media_id: "early", matched: true, event_id: 100, venue_id: 1, confidence: 0.56 },
      { media_id: "late", matched: true, event_id: 100, venue_id: 1, confidence: 0.67 },
      { media_id: "nowhere", matched: false, event_id: null, venue_id: null, confidence: null },
      { media_id: "unlicensed", matched: false, event_id: null, venue_id: 1, confidence: null },
    ]);
    expect(body.events).toEqual([
      {
        id: 100,
        name: "Summer Show",
        starts_at_local: "2025-07-04T20:00:00",
        venue: {
          id: 1,
          name: "Garden",
          city: "New York",
          region: "NY",
          country: "US",
          latitude: 40.75,
          longitude: -73.99,
        },
        performers: [
          { id: 11, name: "Star", category: "rock", image_url: null, is_headliner: true },
          {
            id: 10,
            name: "Opener",
            category: "indie",
            image_url: "https://img.example/10.jpg",
            is_headliner: false,
          },
          { id: 12, name: "Guest", category: null, image_url: null, is_headliner: null },
        ],
        media_count: 2,
        confidence: 0.96,
        media: [
          { media_id: "early", taken_at: "2025-07-04T19:00:00.000Z", media_type: "video" },
          {
            media_id: "late",
            taken_at: "2025-07-04T23:00:00.000Z",
            media_type: "photo",
            thumbnail_url: "https://cdn.example/late.jpg",
          },
        ],
      },
    ]);
    const [stored] = await fixture.server.store.rows<{ last_sync_at: Date | string }>(
      sql`select last_sync_at from users where id = ${userId}`,
    );
    expect(new Date(String(stored?.last_sync_at)).toISOString()).toBe(body.last_sync_at);
    expect(await fixture.userState(userId)).toMatchObject({ received: true });
    expect(await fixture.keptRows(userId)).toEqual([
      { media_id: "early", event_id: 100, media_type: "video" },
      { media_id: "late", event_id: 100, media_type: "photo" },
    ]);
  });

  test("an event's media includes what earlier batches kept, oldest first, and each event comes once", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("first", "2025-07-04T20:30:00Z")]);
    const response = await fixture.send(userId, [
      photo("third", "2025-07-04T22:00:00Z"),
      photo("second", "2025-07-04T21:00:00Z"),
      photo("la", DURING_200, AT_VENUE_2),
    ]);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual([100, 200]);
    const [show, bowl] = response.body.events;
    expect(show.media_count).toBe(3);
    expect(show.media.map((m: { media_id: string }) => m.media_id)).toEqual(["first", "second", "third"]);
    expect(bowl.media_count).toBe(1);
  });

  test("an event the user hid is still reported by a batch that matches it", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100)]);
    await fixture.server.store.rows(sql`update user_events set hidden = true where user_id = ${userId}`);
    const response = await fixture.send(userId, [photo("b", DURING_100)]);
    expect(response.body.matched).toBe(1);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual([100]);
    expect(response.body.events[0].media_count).toBe(2);
  });
});

describe("keeping, upserting and removing", () => {
  test("re-sending creates no duplicates and updates the stored item", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100), photo("b", DURING_100)]);
    const again = await fixture.send(userId, [
      photo("a", "2025-07-04T21:30:00Z", AT_VENUE_1, { media_type: "video", thumbnail_url: "https://t/a" }),
      photo("b", DURING_100),
    ]);
    expect(again.body.matched).toBe(2);
    expect(again.body.events[0].media_count).toBe(2);
    expect(await fixture.keptRows(userId)).toEqual([
      { media_id: "a", event_id: 100, media_type: "video" },
      { media_id: "b", event_id: 100, media_type: "photo" },
    ]);
    expect(await fixture.historyRows(userId)).toEqual([
      { event_id: 100, media_count: 2, photo_count: 1, video_count: 1 },
    ]);
  });

  test("an item that matches nothing is not kept", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [photo("a", DURING_100, NOWHERE)]);
    expect(response.body.accepted).toBe(1);
    expect(await fixture.keptRows(userId)).toEqual([]);
    expect(await fixture.historyRows(userId)).toEqual([]);
  });

  test("a re-sent item moving to another event moves its counts", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100), photo("b", DURING_100)]);
    const moved = await fixture.send(userId, [photo("a", DURING_200, AT_VENUE_2, { media_type: "video" })]);
    expect(moved.body.events.map((e: { id: number; media_count: number }) => [e.id, e.media_count])).toEqual([
      [200, 1],
    ]);
    expect(await fixture.keptRows(userId)).toEqual([
      { media_id: "a", event_id: 200, media_type: "video" },
      { media_id: "b", event_id: 100, media_type: "photo" },
    ]);
    expect(await fixture.historyRows(userId)).toEqual([
      { event_id: 100, media_count: 1, photo_count: 1, video_count: 0 },
      { event_id: 200, media_count: 1, photo_count: 0, video_count: 1 },
    ]);
  });

  test("a re-sent item that now matches nothing, or only an unlicensed event, loses its old match", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100), photo("b", DURING_100), photo("c", DURING_100)]);
    const response = await fixture.send(userId, [photo("a", DURING_100, NOWHERE), photo("b", DURING_101)]);
    expect(response.body.matches).toContainEqual({
      media_id: "b",
      matched: false,
      event_id: null,
      venue_id: 1,
      confidence: null,
    });
    expect(response.body.events).toEqual([]);
    expect(await fixture.keptRows(userId)).toEqual([{ media_id: "c", event_id: 100, media_type: "photo" }]);
    expect(await fixture.historyRows(userId)).toEqual([
      { event_id: 100, media_count: 1, photo_count: 1, video_count: 0 },
    ]);
  });

  test("a rejected re-send leaves the earlier match alone", async () => {
    const userId = await fixture.newUser();
    await fixture.send(userId, [photo("a", DURING_100)]);
    const response = await fixture.send(userId, [{ id: "a", ...AT_VENUE_1 }]);
    expect(response.body.rejected).toEqual([
      { id: "a", reason: "missing_taken_at", detail: "taken_at_missing" },
    ]);
    expect(await fixture.keptRows(userId)).toHaveLength(1);
  });

  test("items are kept per user: the same id under two users is two items", async () => {
    const first = await fixture.newUser();
    const second = await fixture.newUser();
    await fixture.send(first, [photo("same", DURING_100)]);
    await fixture.send(second, [photo("same", DURING_200, AT_VENUE_2)]);
    expect((await fixture.keptRows(first)).map((r) => r.event_id)).toEqual([100]);
    expect((await fixture.keptRows(second)).map((r) => r.event_id)).toEqual([200]);
  });
});
