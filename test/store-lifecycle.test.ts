/**
 * Deleting media, erasing a user and exporting one (docs/api.md §16) at the store, on both databases
 * the service runs on. The HTTP tests (api-lifecycle.test.ts) compare what partners see.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Store } from "../src/store/db.ts";
import { childrenFirst, eraseUser } from "../src/store/erasure.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { deleteMedia } from "../src/store/mediaDeletion.ts";
import { openUserExport } from "../src/store/userExport.ts";
import { createUser } from "../src/store/users.ts";
import { kept, newUser, onBothDatabases } from "./support/batchWrites.ts";
import { rowsHolding, userState } from "./support/userState.ts";

const write = (store: Store, userId: string, items: KeptMedia[], acceptedIds = items.map((m) => m.mediaId)) =>
  writeBatch(store, { userId, partnerId: "acme", acceptedIds, kept: items });

const at = (mediaId: string, eventId: number, takenAt: string, mediaType: "photo" | "video" = "photo") => ({
  ...kept(mediaId, eventId, mediaType),
  takenAt,
});

test("tables are erased children first, whatever order the catalog lists them in", () => {
  const references = [
    { child: "user_event_media", parent: "user_events" },
    { child: "user_events", parent: "users" },
    { child: "media", parent: "events" },
  ];
  const order = childrenFirst(["media", "user_events", "user_event_media", "user_venue_spots"], references);
  expect(order.indexOf("user_event_media")).toBeLessThan(order.indexOf("user_events"));
  expect([...order].sort()).toEqual(["media", "user_event_media", "user_events", "user_venue_spots"]);
});

onBothDatabases("data lifecycle", (storeOf) => {
  test("deleting the items a batch sent restores the state from before it, sync mark included", async () => {
    const store = storeOf();
    const userId = await newUser(store, "restorer@example.com");
    await write(store, userId, [
      at("old-1", 100, "2025-03-09T07:40:00Z"),
      at("old-2", 100, "2025-03-09T07:50:00Z"),
    ]);
    await store.rows(
      sql`update user_events set hidden = true where user_id = ${userId}::uuid and event_id = 100`,
    );
    const before = await userState(store, userId);
    await write(store, userId, [
      at("new-1", 100, "2025-03-09T07:45:00Z", "video"),
      at("new-2", 102, "2025-10-05T07:00:00Z"),
      at("new-3", 102, "2025-10-05T07:01:00Z"),
    ]);
    await store.rows(sql`update users set last_sync_at = ${before.user.last_sync_at}::timestamptz,
      received_since_sync = false where id = ${userId}::uuid`);
    const sent = await userState(store, userId);
    expect(sent.media).toHaveLength(5);

    const deletion = await deleteMedia(store, { userId, partnerId: "acme" }, [
      "new-3",
      "nothing",
      "new-1",
      "new-3",
      "new-2",
    ]);
    expect(deletion).toEqual({ deleted: ["new-3", "new-1", "new-2"], notFound: ["nothing"] });
    const after = await userState(store, userId);
    // Event 102 keeps its history row, at zero, with an empty list: its hidden flag would survive.
    expect(after.events.filter((e) => e.event_id === 102)).toEqual([
      expect.objectContaining({
        event_id: 102,
        media_count: 0,
        photo_count: 0,
        video_count: 0,
        media_json: "[]",
      }),
    ]);
    expect({ ...after, events: after.events.filter((e) => e.event_id !== 102) }).toEqual({
      ...sent,
      media: before.media,
      events: before.events,
      user: { ...sent.user, last_sync_at: before.user.last_sync_at },
    });
    expect(after.user).toEqual(sent.user);
  });

  test("a deletion of ids the user does not keep, or by a partner without the user, changes nothing", async () => {
    const store = storeOf();
    const userId = await newUser(store, "untouched@example.com");
    await write(store, userId, [at("kept", 100, "2025-03-09T07:40:00Z")]);
    const before = await userState(store, userId);
    expect(await deleteMedia(store, { userId, partnerId: "globex" }, ["kept"])).toBeNull();
    const unknown = "7a0c3d4e-1f2b-4c5d-8e9f-0a1b2c3d4e5f";
    expect(await deleteMedia(store, { userId: unknown, partnerId: "acme" }, ["kept"])).toBeNull();
    expect(await deleteMedia(store, { userId, partnerId: "acme" }, ["other", "KEPT"])).toEqual({
      deleted: [],
      notFound: ["other", "KEPT"],
    });
    expect(await userState(store, userId)).toEqual(before);
  });

  test("a deleted id sent again is matched and kept again", async () => {
    const store = storeOf();
    const userId = await newUser(store, "again@example.com");
    await write(store, userId, [at("a", 100, "2025-03-09T07:40:00Z")]);
    await deleteMedia(store, { userId, partnerId: "acme" }, ["a"]);
    await write(store, userId, [at("a", 100, "2025-03-09T07:40:00Z")]);
    const { media, events } = await userState(store, userId);
    expect(media.map((m) => m.media_id)).toEqual(["a"]);
    expect(events.map((e) => [e.event_id, e.media_count])).toEqual([[100, 1]]);
  });

  test("erasing leaves no row holding the user's id in any table, and frees the email and phone", async () => {
    const store = storeOf();
    const profile = {
      email: "Erased@Example.com",
      partnerUserId: "p-1",
      firstName: "Era",
      lastName: "Sed",
      phoneNumber: "+1 555 0100",
      address: { city: "Gone" },
    };
    const userId = (await createUser(store, "acme", profile)).id;
    const neighbour = await newUser(store, "neighbour-of-erased@example.com");
    await write(store, userId, [at("a", 100, "2025-03-09T07:40:00Z"), at("b", 102, "2025-10-05T07:00:00Z")]);
    await write(store, neighbour, [at("a", 100, "2025-03-09T07:40:00Z")]);
    await store.rows(
      sql`update user_events set hidden = true where user_id = ${userId}::uuid and event_id = 102`,
    );
    const neighbourBefore = await userState(store, neighbour);
    expect((await rowsHolding(store, userId)).length).toBeGreaterThan(3);

    expect(await eraseUser(store, "globex", userId)).toBe(false);
    expect(await eraseUser(store, "acme", userId)).toBe(true);
    expect(await rowsHolding(store, userId)).toEqual([]);
    expect(await eraseUser(store, "acme", userId)).toBe(false);
    expect(await userState(store, neighbour)).toEqual(neighbourBefore);

    const again = await createUser(store, "acme", profile);
    expect(again.created).toBe(true);
    expect(again.id).not.toBe(userId);
    const [phone] = await store.rows<{ phone_number: string | null }>(
      sql`select phone_number from users where id = ${again.id}::uuid`,
    );
    expect(phone?.phone_number).toBe("+1 555 0100");
  });

  test("a batch racing an erasure commits before it or finds no user: nothing is ever left", async () => {
    const store = storeOf();
    const outcomes = { before: 0, refused: 0 };
    // The embedded database runs one statement at a time, so its rounds race less and cost more.
    const rounds = store.kind === "postgres" ? 40 : 8;
    for (let round = 0; round < rounds; round++) {
      const userId = await newUser(store, `racer-${round}@example.com`);
      await write(store, userId, [at("seed", 100, "2025-03-09T07:40:00Z")]);
      const items = [at(`r${round}`, 102, "2025-10-05T07:00:00Z"), at("seed", 102, "2025-10-05T07:01:00Z")];
      const [written, erased] = await Promise.all([
        round % 2 === 0 ? write(store, userId, items) : Bun.sleep(0).then(() => write(store, userId, items)),
        eraseUser(store, "acme", userId),
      ]);
      expect(erased).toBe(true);
      outcomes[written === null ? "refused" : "before"]++;
      expect(await rowsHolding(store, userId)).toEqual([]);
    }
  });

  test("the export gives back every member as stored, oldest capture first, over many pages", async () => {
    const store = storeOf();
    const profile = {
      email: "exported@example.com",
      partnerUserId: "ext-7",
      firstName: "Ex",
      lastName: "Port",
      phoneNumber: "+44 20 7946 0000",
      address: { line1: "1 Road", postal_code: "N1", country: "GB" },
    };
    const userId = (await createUser(store, "acme", profile)).id;
    const full: KeptMedia = {
      ...at("full", 102, "2025-10-05T07:00:00.123456Z", "video"),
      latitude: 51.123456789012,
      longitude: -0.000001,
      filename: "IMG_0001.MOV",
      durationSeconds: 12.75,
      thumbnailUrl: "https://t.example/1.jpg?a=1&b=\\",
      deviceMake: "Apple",
      deviceModel: "iPhone 15 Pro",
      deviceLensModel: 'Back "triple" camera',
    };
    // Items a few microseconds apart within one millisecond, and items at the same instant: pages end
    // between both kinds.
    const many = Array.from({ length: 2100 }, (_, i) =>
      at(
        `m${String(i).padStart(4, "0")}`,
        100,
        `2025-03-09T07:${String(i % 60).padStart(2, "0")}:00.00000${i % 7}Z`,
      ),
    );
    for (let i = 0; i < many.length; i += 200) await write(store, userId, many.slice(i, i + 200));
    await write(store, userId, [full]);
    await store.rows(
      sql`update user_events set hidden = true where user_id = ${userId}::uuid and event_id = 102`,
    );

    const exported = await openUserExport(store, "acme", userId);
    if (typeof exported === "string") throw new Error(`the export did not open: ${exported}`);
    const pages = [];
    try {
      for await (const page of exported.pages()) pages.push(page);
    } finally {
      await exported.close();
    }
    expect(pages.length).toBeGreaterThan(2);
    const items = pages.flat();
    expect(exported.user).toMatchObject({
      user_id: userId,
      email: profile.email,
      partner_user_id: "ext-7",
      first_name: "Ex",
      last_name: "Port",
      phone_number: profile.phoneNumber,
      address: profile.address,
      has_synced: false,
      hidden_event_ids: [102],
    });
    expect(exported.user.last_sync_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const expectedOrder = [...many]
      .sort((a, b) =>
        a.takenAt === b.takenAt ? (a.mediaId < b.mediaId ? -1 : 1) : a.takenAt < b.takenAt ? -1 : 1,
      )
      .map((m) => m.mediaId);
    expect(items.map((m) => m.media_id)).toEqual([...expectedOrder, "full"]);
    expect(items.at(-1)).toEqual({
      media_id: "full",
      taken_at: "2025-10-05T07:00:00.123Z",
      taken_at_key: "2025-10-05T07:00:00.123456Z",
      latitude: full.latitude,
      longitude: full.longitude,
      media_type: "video",
      filename: full.filename,
      duration_seconds: 12.75,
      thumbnail_url: full.thumbnailUrl,
      device_make: "Apple",
      device_model: "iPhone 15 Pro",
      device_lens_model: full.deviceLensModel,
      event_id: 102,
      venue_id: 2,
    });
    expect(await openUserExport(store, "globex", userId)).toBe("no_such_user");
  });
});
