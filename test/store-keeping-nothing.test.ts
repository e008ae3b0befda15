import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import type { Store } from "../src/store/db.ts";
import { writeBatch } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { queryOf } from "../src/store/renderedStatement.ts";
import { countsOf, kept, newUser, onBothDatabases } from "./support/batchWrites.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/**
 * Batches that keep nothing are written several to a statement (src/store/keepingNothing.ts): a store
 * sends one such statement at a time, so batches sent together go out as the first alone and the rest
 * in one statement.
 */

/** The store, counting its statements of batches that keep nothing, and able to fail the next one. */
type Counted = { store: Store; statements: () => number; failNext: () => void };

function countingStore(store: Store): Counted {
  let statements = 0;
  let failing = false;
  const counted: Store = {
    ...store,
    rows: (statement) => {
      if (queryOf(statement).sql.includes("batches_keeping_nothing")) statements++;
      if (failing) {
        failing = false;
        return Promise.reject(new Error("the connection was lost"));
      }
      return store.rows(statement);
    },
  };
  return { store: counted, statements: () => statements, failNext: () => (failing = true) };
}

const ids = (prefix: string, count = 20) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
const UNKNOWN_USER = "30000000-0000-4000-8000-000000000009";

onBothDatabases("batches that keep nothing", (storeOf) => {
  test("sent together, they share a statement and each gets its own outcome", async () => {
    const store = storeOf();
    const alice = await newUser(store, "nothing-alice@x.example");
    const bob = await newUser(store, "nothing-bob@x.example");
    const carol = await newUser(store, "nothing-carol@x.example");
    await writeBatch(store, {
      userId: bob,
      partnerId: "acme",
      acceptedIds: ["bob-kept"],
      kept: [kept("bob-kept", 100)],
    });
    const counted = countingStore(store);
    const batch = (userId: string, acceptedIds: string[], partnerId = "acme") =>
      writeBatch(counted.store, { userId, partnerId, acceptedIds, kept: [] });

    const [first, alicesFirst, alicesSecond, bobs, unknown, otherPartners, carols] = await Promise.all([
      batch(carol, ids("carol-first")),
      batch(alice, ids("alice-a")),
      batch(alice, ids("alice-b")),
      batch(bob, ["bob-kept", ...ids("bob")]),
      batch(UNKNOWN_USER, ids("unknown")),
      batch(carol, ids("carol-globex"), "globex"),
      batch(carol, ids("carol-second")),
    ]);

    // The first alone, then the other six together; bob's went again as a whole batch to remove his item.
    expect(counted.statements()).toBe(2);
    for (const written of [first, alicesFirst, alicesSecond, carols]) {
      expect(written?.lastSyncAt).toBeInstanceOf(Date);
      expect(written?.events).toEqual([]);
    }
    expect(alicesSecond?.lastSyncAt.getTime()).toBeGreaterThanOrEqual(alicesFirst?.lastSyncAt.getTime() ?? 0);
    expect(unknown).toBeNull();
    expect(otherPartners).toBeNull();
    expect(bobs?.lastSyncAt).toBeInstanceOf(Date);
    expect(await store.rows(sql`select 1 from media where user_id = ${bob}::uuid`)).toEqual([]);
    expect((await countsOf(store, bob)).map((row) => row.media_count)).toEqual([0]);
    const [alicesMark] = await store.rows<{ ms: number }>(
      sql`select floor(extract(epoch from last_sync_at) * 1000)::float8 as ms from users where id = ${alice}::uuid`,
    );
    expect(alicesMark?.ms).toBe(alicesSecond?.lastSyncAt.getTime());
  });

  test("a statement that fails fails its batches and the next ones are still sent", async () => {
    const store = storeOf();
    const dave = await newUser(store, "nothing-dave@x.example");
    const counted = countingStore(store);
    counted.failNext();
    const batch = (prefix: string) =>
      writeBatch(counted.store, { userId: dave, partnerId: "acme", acceptedIds: ids(prefix), kept: [] });
    const failed = await Promise.allSettled([batch("lost-1"), batch("lost-2")]);
    expect(failed.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled"]);
    const [later] = await Promise.all([batch("later")]);
    expect(later?.lastSyncAt).toBeInstanceOf(Date);
  });
});

describe("batches that keep nothing while another transaction holds a user's row", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    succeeded(await importCatalog(database.store, memoryLines(baseCatalog)));
    await createPartner(database.store, { id: "acme", name: "Acme" });
  });

  afterAll(async () => {
    await database.drop();
  });

  test("the other users' batches are written at once, and the held user's once the row is free", async () => {
    const { store } = database;
    const held = await newUser(store, "nothing-held@x.example");
    const free = await newUser(store, "nothing-free@x.example");
    const client = store.client;
    if (client === null) throw new Error("the test database is PostgreSQL");
    const holder = await client.reserve();
    try {
      await holder.unsafe("begin");
      await holder.unsafe("select 1 from users where id = $1 for update", [held]);
      const batch = (userId: string, prefix: string) =>
        writeBatch(store, { userId, partnerId: "acme", acceptedIds: ids(prefix), kept: [] });
      const heldsBatch = batch(held, "held");
      let heldWritten = false;
      void heldsBatch.then(() => (heldWritten = true));
      const freesBatch = await batch(free, "free");
      expect(freesBatch?.lastSyncAt).toBeInstanceOf(Date);
      const [again] = await Promise.all([batch(free, "free-again")]);
      expect(again?.lastSyncAt).toBeInstanceOf(Date);
      expect(heldWritten).toBe(false);
      await holder.unsafe("commit");
      expect((await heldsBatch)?.lastSyncAt).toBeInstanceOf(Date);
    } finally {
      holder.release();
    }
  });
});
