/**
 * The batch write itself (src/store/ingest.ts writeBatch), on both databases the service runs on: what
 * a batch keeps, moves and forgets, and the user_events counts it leaves. The HTTP tests cover the same
 * rules on PostgreSQL through the API; these make sure the embedded database runs the same statement.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { openStore, type Store } from "../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { createUser } from "../src/store/users.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

const kept = (mediaId: string, eventId: number, mediaType: "photo" | "video" = "photo"): KeptMedia => ({
  mediaId,
  eventId,
  venueId: eventId === 102 ? 2 : 1,
  takenAt: "2025-03-09T07:45:00.123456Z",
  latitude: 40.75,
  longitude: -73.99,
  mediaType,
  filename: null,
  durationSeconds: mediaType === "video" ? 12.5 : null,
  thumbnailUrl: null,
  deviceMake: null,
  deviceModel: null,
  deviceLensModel: null,
});

async function newUser(store: Store, email: string): Promise<string> {
  const input = {
    email,
    partnerUserId: null,
    firstName: null,
    lastName: null,
    phoneNumber: null,
    address: null,
  };
  return (await createUser(store, "acme", input)).id;
}

const mediaOf = (store: Store, userId: string) =>
  store.rows<{ media_id: string; event_id: number; media_type: string }>(
    sql`select media_id, event_id, media_type from media where user_id = ${userId}::uuid order by media_id`,
  );

const countsOf = (store: Store, userId: string) =>
  store.rows<{ event_id: number; media_count: number; photo_count: number; video_count: number }>(
    sql`select event_id, media_count, photo_count, video_count from user_events
        where user_id = ${userId}::uuid order by event_id`,
  );

type StoredItem = { media_id: string; taken_at: string; media_type: string; thumbnail_url?: string };

/** Each history row's stored media list, parsed; a row without one reads as an empty list. */
async function listsOf(store: Store, userId: string): Promise<Record<number, StoredItem[]>> {
  const rows = await store.rows<{ event_id: number; media_json: string | null }>(sql`
    select ue.event_id, uem.media_json from user_events ue
    left join user_event_media uem on uem.user_id = ue.user_id and uem.event_id = ue.event_id
    where ue.user_id = ${userId}::uuid`);
  return Object.fromEntries(rows.map((row) => [row.event_id, JSON.parse(row.media_json ?? "[]")]));
}

/** The lists as spec §2.6 and contract §7 describe them, worked out here from the media rows. */
async function expectedListsOf(store: Store, userId: string): Promise<Record<number, StoredItem[]>> {
  const rows = await store.rows<{
    media_id: string;
    event_id: number;
    media_type: string;
    thumbnail_url: string | null;
    micros: string;
  }>(sql`select media_id, event_id, media_type, thumbnail_url,
           (extract(epoch from taken_at) * 1000000)::int8::text as micros
         from media where user_id = ${userId}::uuid`);
  const lists: Record<number, StoredItem[]> = {};
  for (const { event_id } of await countsOf(store, userId)) lists[event_id] = [];
  rows.sort((a, b) => {
    const byTime = BigInt(a.micros) - BigInt(b.micros);
    if (byTime !== 0n) return byTime < 0n ? -1 : 1;
    return a.media_id < b.media_id ? -1 : a.media_id > b.media_id ? 1 : 0;
  });
  for (const row of rows) {
    const item: StoredItem = {
      media_id: row.media_id,
      taken_at: new Date(Number(BigInt(row.micros) / 1000n)).toISOString(),
      media_type: row.media_type,
    };
    if (row.thumbnail_url !== null) item.thumbnail_url = row.thumbnail_url;
    lists[row.event_id]?.push(item);
  }
  return lists;
}

function batchWriteTests(storeOf: () => Store): void {
  test("a user of another partner, or none, is no user: null, and nothing is written", async () => {
    const store = storeOf();
    const userId = await newUser(store, "owned@example.com");
    const batch = { userId, acceptedIds: ["a"], kept: [kept("a", 100)] };
    const read = sql`select 1 as one`;
    expect(await writeBatch(store, { ...batch, partnerId: "globex" }, read)).toBeNull();
    const unknown = "7a0c3d4e-1f2b-4c5d-8e9f-0a1b2c3d4e5f";
    expect(await writeBatch(store, { ...batch, userId: unknown, partnerId: "acme" }, read)).toBeNull();
    expect(await mediaOf(store, userId)).toEqual([]);
    expect(await countsOf(store, userId)).toEqual([]);
    const [user] = await store.rows<{ last_sync_at: Date | null }>(
      sql`select last_sync_at from users where id = ${userId}::uuid`,
    );
    expect(user?.last_sync_at).toBeNull();
    expect(await writeBatch(store, { ...batch, partnerId: "acme" }, read)).toMatchObject({
      rows: [{ one: 1 }],
    });
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

  test("every batch leaves each history row's media list as its media are", async () => {
    const store = storeOf();
    const userId = await newUser(store, "lister@example.com");
    const at = (mediaId: string, eventId: number, takenAt: string, thumbnailUrl: string | null = null) => ({
      ...kept(mediaId, eventId),
      takenAt,
      thumbnailUrl,
    });
    const steps: { acceptedIds: string[]; kept: KeptMedia[] }[] = [
      // Ties on the instant break by id in code-point order: "B" before "a".
      {
        acceptedIds: ["a", "B", 'q"\\\nü', "v"],
        kept: [
          at("a", 100, "2025-03-09T07:45:00.123999Z"),
          at("B", 100, "2025-03-09T07:45:00.123999Z", "https://t.example/B.jpg"),
          at('q"\\\nü', 100, "2025-03-09T07:40:00Z", 'https://t.example/"q"?a=1&b=\\u'),
          { ...at("v", 102, "2025-03-09T07:50:00.000001Z"), mediaType: "video" },
        ],
      },
      // A thumbnail and an instant change at the same event: the counts stay, the list does not.
      {
        acceptedIds: ["a", "B"],
        kept: [
          at("a", 100, "2025-03-09T07:30:00Z", "https://t.example/a.jpg"),
          at("B", 100, "2025-03-09T07:45:00.123999Z"),
        ],
      },
      // One item moves to the other event, where one is forgotten: the list it left changes too.
      { acceptedIds: ["a", "v"], kept: [at("a", 102, "2025-03-09T07:31:00Z")] },
      { acceptedIds: ["n"], kept: [at("n", 100, "1999-12-31T23:59:59.9999Z")] },
      // Re-sent unchanged: nothing to write.
      {
        acceptedIds: ["a", "n"],
        kept: [at("a", 102, "2025-03-09T07:31:00Z"), at("n", 100, "1999-12-31T23:59:59.9999Z")],
      },
      // Everything at 102 goes.
      { acceptedIds: ["a"], kept: [] },
    ];
    for (const step of steps) {
      await writeBatch(store, { userId, partnerId: "acme", ...step });
      expect(await listsOf(store, userId)).toEqual(await expectedListsOf(store, userId));
    }
    const lists = await listsOf(store, userId);
    expect(lists[102]).toEqual([]);
    expect(lists[100]?.map((item) => item.media_id)).toEqual(["n", 'q"\\\nü', "B"]);
    expect(lists[100]?.[0]?.taken_at).toBe("1999-12-31T23:59:59.999Z");
  });

  test("racing batches of one user at one event leave its list with every item", async () => {
    const store = storeOf();
    const userId = await newUser(store, "racer@example.com");
    const ids = Array.from({ length: 8 }, (_, i) => `race-${i}`);
    await Promise.all(
      ids.map((id, i) =>
        writeBatch(store, {
          userId,
          partnerId: "acme",
          acceptedIds: [id],
          kept: [{ ...kept(id, 100), takenAt: `2025-03-09T07:4${i}:00Z` }],
        }),
      ),
    );
    const lists = await listsOf(store, userId);
    expect(lists).toEqual(await expectedListsOf(store, userId));
    expect(lists[100]?.map((item) => item.media_id)).toEqual(ids);
  });

  test("the upgrade to stored lists writes the text batches write", async () => {
    const store = storeOf();
    const userId = await newUser(store, "upgraded@example.com");
    await writeBatch(store, {
      userId,
      partnerId: "acme",
      acceptedIds: ["x", "y", "z"],
      kept: [
        { ...kept("x", 100), thumbnailUrl: 'https://t.example/"x"\u0001\u001f\t\b\f\r\u007f\u2028é' },
        { ...kept("y", 100), takenAt: "2025-03-09T07:44:59.9995Z" },
        kept("z", 102, "video"),
      ],
    });
    const migration = readFileSync(join(import.meta.dir, "../drizzle/0006_user_event_media.sql"), "utf8");
    const backfill =
      /INSERT INTO "user_event_media" \("user_id", "event_id", "media_json"\)\s+(SELECT[\s\S]+?);/.exec(
        migration,
      )?.[1];
    if (backfill === undefined) throw new Error("drizzle/0006 has no backfill");
    const upgraded = await store.rows<{ event_id: number; media_json: string }>(
      sql`select event_id, media_json from (${sql.raw(backfill)}) as fresh
          where user_id = ${userId}::uuid order by event_id`,
    );
    const stored = await store.rows<{ event_id: number; media_json: string }>(
      sql`select event_id, media_json from user_event_media where user_id = ${userId}::uuid order by event_id`,
    );
    expect(upgraded).toHaveLength(2);
    expect(upgraded).toEqual(stored);
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
}

async function prepare(store: Store): Promise<void> {
  succeeded(await importCatalog(store, memoryLines(baseCatalog)));
  await createPartner(store, { id: "acme", name: "Acme" });
  await createPartner(store, { id: "globex", name: "Globex" });
}

describe("batch write on PostgreSQL", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await prepare(database.store);
  });
  afterAll(async () => {
    await database.drop();
  });
  batchWriteTests(() => database.store);
});

describe("batch write on PGlite", () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rollcall-pglite-ingest-"));
    store = await openStore({ databaseUrl: null, dataDir: dir });
    await prepare(store);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  batchWriteTests(() => store);
});
