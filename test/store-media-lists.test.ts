/**
 * The stored media lists (user_event_media) a batch writes, on both databases the service runs on:
 * each list always as its media are, whatever a batch changes, and the same text the upgrade to
 * stored lists (drizzle/0006) wrote for databases from before them.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { Store } from "../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { countsOf, kept, newUser, onBothDatabases } from "./support/batchWrites.ts";

type StoredItem = { media_id: string; taken_at: string; media_type: string; thumbnail_url?: string };

/** Each history row's stored media list, parsed; a row without one reads as an empty list. */
async function listsOf(store: Store, userId: string): Promise<Record<number, StoredItem[]>> {
  const rows = await store.rows<{ event_id: number; media_json: string | null }>(sql`
    select ue.event_id, uem.media_json from user_events ue
    left join user_event_media uem on uem.user_id = ue.user_id and uem.event_id = ue.event_id
    where ue.user_id = ${userId}::uuid`);
  return Object.fromEntries(rows.map((row) => [row.event_id, JSON.parse(row.media_json ?? "[]")]));
}

/** The lists as docs/api.md §4 and §7 describe them, worked out here from the media rows. */
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

onBothDatabases("stored media lists", (storeOf) => {
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
});
