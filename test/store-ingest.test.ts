/**
 * The batch write itself (src/store/ingest.ts writeBatch), on both databases the service runs on: what
 * a batch keeps, moves and forgets, and the user_events counts it leaves. The HTTP tests cover the same
 * rules on PostgreSQL through the API; these make sure the embedded database runs the same statement.
 * The stored media lists a batch writes: store-media-lists.test.ts.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Store } from "../src/store/db.ts";
import { writeBatch } from "../src/store/ingest.ts";
import { countsOf, kept, newUser, onBothDatabases } from "./support/batchWrites.ts";

const mediaOf = (store: Store, userId: string) =>
  store.rows<{ media_id: string; event_id: number; media_type: string }>(
    sql`select media_id, event_id, media_type from media where user_id = ${userId}::uuid order by media_id`,
  );

onBothDatabases("batch write", (storeOf) => {
  test("a user of another partner, or none, is no user: null, and nothing is written", async () => {
    const store = storeOf();
    const userId = await newUser(store, "owned@example.com");
    const batch = { userId, acceptedIds: ["a"], kept: [kept("a", 100)] };
    expect(await writeBatch(store, { ...batch, partnerId: "globex" }, [100])).toBeNull();
    const unknown = "7a0c3d4e-1f2b-4c5d-8e9f-0a1b2c3d4e5f";
    expect(await writeBatch(store, { ...batch, userId: unknown, partnerId: "acme" }, [100])).toBeNull();
    expect(await mediaOf(store, userId)).toEqual([]);
    expect(await countsOf(store, userId)).toEqual([]);
    const [user] = await store.rows<{ last_sync_at: Date | null }>(
      sql`select last_sync_at from users where id = ${userId}::uuid`,
    );
    expect(user?.last_sync_at).toBeNull();
    const written = await writeBatch(store, { ...batch, partnerId: "acme" }, [102, 100]);
    expect(written?.events.map(({ event_id, media_count }) => ({ event_id, media_count }))).toEqual([
      { event_id: 102, media_count: null },
      { event_id: 100, media_count: 1 },
    ]);
    expect(JSON.parse(written?.events[1]?.media_json ?? "[]")).toHaveLength(1);
  });

  test("the answer's events are read only when asked for", async () => {
    const store = storeOf();
    const userId = await newUser(store, "unasked@example.com");
    const written = await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ["a"],
      kept: [kept("a", 100)],
    });
    expect(written?.events).toEqual([]);
  });

  test("keeps, moves, forgets and counts, touching no other user's media", async () => {
    const store = storeOf();
    const userId = await newUser(store, "writer@example.com");
    const neighbour = await newUser(store, "neighbour@example.com");
    await writeBatch(store, {
      userId: neighbour,
      partnerId: "acme",
      acceptedIds: ["a", "b"],
      kept: [kept("a", 100), kept("b", 100)],
    });

    await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ["a", "b", "c"],
      kept: [kept("a", 100), kept("b", 100), kept("c", 100, "video")],
    });
    expect(await countsOf(store, userId)).toEqual([
      { event_id: 100, media_count: 3, photo_count: 2, video_count: 1 },
    ]);

    const written = await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ["a", "b", "c", "d", "e"],
      kept: [kept("a", 102), kept("c", 100, "video"), kept("d", 100)],
    });
    expect(written?.lastSyncAt).toBeInstanceOf(Date);
    expect(await mediaOf(store, userId)).toEqual([
      { media_id: "a", event_id: 102, media_type: "photo" },
      { media_id: "c", event_id: 100, media_type: "video" },
      { media_id: "d", event_id: 100, media_type: "photo" },
    ]);
    expect(await countsOf(store, userId)).toEqual([
      { event_id: 100, media_count: 2, photo_count: 1, video_count: 1 },
      { event_id: 102, media_count: 1, photo_count: 1, video_count: 0 },
    ]);
    const copies = await store.rows<{ event_id: number; copied: boolean }>(sql`
      select ue.event_id, (ue.starts_at, ue.starts_at_local, ue.venue_id, ue.licensed)
        = (e.starts_at, e.starts_at_local, e.venue_id, e.licensed) as copied
      from user_events ue join events e on e.id = ue.event_id
      where ue.user_id = ${userId}::uuid order by ue.event_id`);
    expect(copies).toEqual([
      { event_id: 100, copied: true },
      { event_id: 102, copied: true },
    ]);
    expect((await mediaOf(store, neighbour)).map((m) => m.media_id)).toEqual(["a", "b"]);
    expect(await countsOf(store, neighbour)).toEqual([
      { event_id: 100, media_count: 2, photo_count: 2, video_count: 0 },
    ]);
  });

  test("ids with quotes, backslashes, commas and braces are kept and found again as sent", async () => {
    const store = storeOf();
    const userId = await newUser(store, "escaped@example.com");
    const ids = ['say "cheese"', "C:\\DCIM\\100APPLE", 'both \\"', "a,b", "{x}", "NULL", ""];
    await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ids,
      kept: ids.map((id) => kept(id, 100)),
    });
    expect((await mediaOf(store, userId)).map((row) => row.media_id).sort()).toEqual([...ids].sort());
    // Sent again, each id finds its stored row: nothing moves, nothing is counted twice.
    await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ids,
      kept: ids.map((id) => kept(id, 100)),
    });
    expect(await countsOf(store, userId)).toEqual([
      { event_id: 100, media_count: ids.length, photo_count: ids.length, video_count: 0 },
    ]);
  });

  test("a batch that keeps nothing forgets what its ids matched before", async () => {
    const store = storeOf();
    const userId = await newUser(store, "forgetful@example.com");
    await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ["x", "y"],
      kept: [kept("x", 100), kept("y", 102)],
    });
    await writeBatch(store, { userId, partnerId: "acme", acceptedIds: ["x", "y"], kept: [] });
    expect(await mediaOf(store, userId)).toEqual([]);
    expect(await countsOf(store, userId)).toEqual([
      { event_id: 100, media_count: 0, photo_count: 0, video_count: 0 },
      { event_id: 102, media_count: 0, photo_count: 0, video_count: 0 },
    ]);
  });
});
