/**
 * A catalog import that moves an event while a batch is writing a user's first media there: the
 * user's history must end up with the event's new start (it kept the old one for good when the
 * batch's copy was written after the import's refresh had passed).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { ATTENDANCE_COPIES_LOCK } from "../src/store/db.ts";
import { writeBatch } from "../src/store/ingest.ts";
import { event, succeeded, venue } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;
const USER = "5f0c3d1e-8a7b-4c2d-9e10-00000000aa01";

beforeAll(async () => {
  database = await createTestDatabase();
  succeeded(
    await importCatalog(
      database.store,
      memoryLines([venue(1, "UTC"), event(100, 1, "2025-07-04T20:00:00")], 1),
      {},
    ),
  );
  await database.store.rows(sql`insert into partners (id, name) values ('racer', 'Racer')`);
  await database.store.rows(sql`insert into users (id, partner_id, email, email_key)
    values (${USER}, 'racer', 'r@example.com', 'r@example.com')`);
});

afterAll(async () => {
  await database.drop();
});

const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), Bun.sleep(ms).then(() => false)]);

describe("imports and batches", () => {
  test("an import that moves an event waits for a batch in flight, then refreshes the copy it wrote", async () => {
    const batch = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      let importing: Promise<unknown> = Promise.resolve();
      await batch.begin(async (tx) => {
        // What a batch does first; then it writes the copies of the event as it read them: 20:00.
        await tx`select pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8)`;
        await tx`insert into user_events (user_id, event_id, starts_at, starts_at_local, venue_id, licensed,
                   media_count, photo_count, video_count)
                 select ${USER}, id, starts_at, starts_at_local, venue_id, licensed, 1, 1, 0 from events where id = 100`;
        importing = importCatalog(
          database.store,
          memoryLines([venue(1, "UTC"), event(100, 1, "2025-07-04T22:30:00")], 1),
          {},
        );
        expect(await settledWithin(importing, 300)).toBe(false);
      });
      await importing;
    } finally {
      await batch.end();
    }
    const [copy] = await database.store.rows<{ starts_at_local: string }>(
      sql`select starts_at_local from user_events where user_id = ${USER} and event_id = 100`,
    );
    expect(copy?.starts_at_local).toBe("2025-07-04T22:30:00");
  });

  test("a batch waits while an import holds the copies' lock, then writes what the import committed", async () => {
    const holder = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      let writing: Promise<unknown> = Promise.resolve();
      await holder.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${ATTENDANCE_COPIES_LOCK}::int8)`;
        writing = writeBatch(database.store, { userId: USER, partnerId: "racer", acceptedIds: [], kept: [] });
        expect(await settledWithin(writing, 300)).toBe(false);
      });
      expect(await writing).toMatchObject({ rows: [] });
    } finally {
      await holder.end();
    }
  });
});
