/**
 * A catalog import that moves an event while a batch writes a user's first media there (the batch
 * copies the event's start into user_events), in both orders, through the real write path
 * (src/store/ingest.ts writeBatch, what the media API commits with) and the real import. Whichever
 * commits first, the history must end up with the event's new start. Each race is held open by a
 * transaction of the test's own that makes one side wait on a row, and the test goes on when PostgreSQL
 * shows the expected wait, not after a sleep.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { kept } from "./support/batchWrites.ts";
import { event, succeeded, venue } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;
const PARTNER = "racer";
const FIRST = "5f0c3d1e-8a7b-4c2d-9e10-00000000aa01";
const SECOND = "5f0c3d1e-8a7b-4c2d-9e10-00000000aa02";
const NEIGHBOUR = "5f0c3d1e-8a7b-4c2d-9e10-00000000aa03";

/** Event 100 is the first race's, 200 the second's; each import sends both, with their current starts. */
const starts = new Map([
  [100, "2025-07-04T20:00:00"],
  [200, "2025-08-01T20:00:00"],
]);

function importStarts(moved: Record<number, string>): Promise<unknown> {
  for (const [id, start] of Object.entries(moved)) starts.set(Number(id), start);
  const lines = [venue(1, "UTC"), ...[...starts].map(([id, start]) => event(id, 1, start))];
  return importCatalog(database.store, memoryLines(lines, 1), {}).then(succeeded);
}

const keptAt = (mediaId: string, eventId: number): KeptMedia => ({
  ...kept(mediaId, eventId),
  venueId: 1,
  takenAt: "2025-07-04T21:00:00Z",
});

const write = (userId: string, item: KeptMedia) =>
  writeBatch(database.store, { userId, partnerId: PARTNER, acceptedIds: [item.mediaId], kept: [item] });

beforeAll(async () => {
  database = await createTestDatabase();
  await importStarts({});
  await database.store.rows(sql`insert into partners (id, name) values (${PARTNER}, 'Racer')`);
  for (const id of [FIRST, SECOND, NEIGHBOUR]) {
    await database.store.rows(sql`insert into users (id, partner_id, email, email_key)
      values (${id}, ${PARTNER}, ${`${id}@example.com`}, ${`${id}@example.com`})`);
  }
});

afterAll(async () => {
  await database.drop();
});

/**
 * Resolves true once a backend of the test database waits on a lock of one of `waitEvents`
 * (pg_stat_activity's wait_event: `advisory`, or `transactionid`/`tuple` for another transaction's
 * row), and false if `pending` settles first: a side that should have waited and did not.
 */
async function waitsOn(waitEvents: string[], pending: Promise<unknown>): Promise<boolean> {
  let settled = false;
  pending.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    const [found] = await database.store.rows<{ waiting: boolean }>(sql`
      select exists (select 1 from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'
          and wait_event = any(${sql.param(waitEvents)}::text[])) as waiting`);
    if (found?.waiting) return true;
    await Bun.sleep(5);
  }
  return false;
}

const copiedStart = async (userId: string, eventId: number) => {
  const [row] = await database.store.rows<{ starts_at_local: string; media_count: number }>(
    sql`select starts_at_local, media_count from user_events where user_id = ${userId} and event_id = ${eventId}`,
  );
  return row;
};

describe("imports and batches", () => {
  test("an import that moves an event waits for a batch in flight, then refreshes the copy it wrote", async () => {
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    const blocker = await client.reserve();
    let batchWaited = false;
    let importWaited = false;
    let writing: Promise<unknown> = Promise.resolve();
    let importing: Promise<unknown> = Promise.resolve();
    try {
      await blocker`begin`;
      // An uncommitted row with the batch's key: the batch statement, its snapshot taken (the event at
      // 20:00), waits for this transaction before it writes the item and the copy.
      await blocker`insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude,
                      media_type) values (${FIRST}, 'a', 100, 1, now(), 0, 0, 'photo')`;
      writing = write(FIRST, keptAt("a", 100));
      batchWaited = await waitsOn(["transactionid", "tuple"], writing);
      importing = importStarts({ 100: "2025-07-04T22:30:00" });
      importWaited = await waitsOn(["advisory"], importing);
    } finally {
      await blocker`rollback`;
      blocker.release();
      await client.end();
    }
    await writing;
    await importing;
    expect({ batchWaited, importWaited }).toEqual({ batchWaited: true, importWaited: true });
    expect(await copiedStart(FIRST, 100)).toEqual({ starts_at_local: "2025-07-04T22:30:00", media_count: 1 });
  });

  test("a batch waits while an import holds the copies' lock, then writes what the import committed", async () => {
    await write(NEIGHBOUR, keptAt("n", 200));
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    const blocker = await client.reserve();
    let importWaited = false;
    let batchWaited = false;
    let importing: Promise<unknown> = Promise.resolve();
    let writing: Promise<unknown> = Promise.resolve();
    try {
      await blocker`begin`;
      // The import refreshes the neighbour's copy with the copies' lock held: it waits here, holding it.
      await blocker`select 1 from user_events where user_id = ${NEIGHBOUR} and event_id = 200 for update`;
      importing = importStarts({ 200: "2025-08-01T23:15:00" });
      importWaited = await waitsOn(["transactionid", "tuple"], importing);
      writing = write(SECOND, keptAt("b", 200));
      batchWaited = await waitsOn(["advisory"], writing);
    } finally {
      await blocker`rollback`;
      blocker.release();
      await client.end();
    }
    await importing;
    await writing;
    expect({ importWaited, batchWaited }).toEqual({ importWaited: true, batchWaited: true });
    expect(await copiedStart(SECOND, 200)).toEqual({
      starts_at_local: "2025-08-01T23:15:00",
      media_count: 1,
    });
    expect(await copiedStart(NEIGHBOUR, 200)).toEqual({
      starts_at_local: "2025-08-01T23:15:00",
      media_count: 1,
    });
  });
});
