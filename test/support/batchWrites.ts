import { afterAll, beforeAll, describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import { openStore, type Store } from "../../src/store/db.ts";
import type { KeptMedia } from "../../src/store/ingest.ts";
import { createPartner } from "../../src/store/keys.ts";
import { createUser } from "../../src/store/users.ts";
import { baseCatalog, succeeded } from "./catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";

/**
 * The fixture of the batch write tests (src/store/ingest.ts writeBatch): the base catalog, partners
 * acme and globex, items to keep, and the same tests run on both databases the service runs on.
 */

export const kept = (
  mediaId: string,
  eventId: number,
  mediaType: "photo" | "video" = "photo",
): KeptMedia => ({
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

export async function newUser(store: Store, email: string): Promise<string> {
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

export const countsOf = (store: Store, userId: string) =>
  store.rows<{ event_id: number; media_count: number; photo_count: number; video_count: number }>(
    sql`select event_id, media_count, photo_count, video_count from user_events
        where user_id = ${userId}::uuid order by event_id`,
  );

async function prepare(store: Store): Promise<void> {
  succeeded(await importCatalog(store, memoryLines(baseCatalog)));
  await createPartner(store, { id: "acme", name: "Acme" });
  await createPartner(store, { id: "globex", name: "Globex" });
}

/** Registers `tests` twice: on a PostgreSQL test database and on an embedded PGlite one. */
export function onBothDatabases(name: string, tests: (storeOf: () => Store) => void): void {
  describe(`${name} on PostgreSQL`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
      await prepare(database.store);
    });
    afterAll(async () => {
      await database.drop();
    });
    tests(() => database.store);
  });

  describe(`${name} on PGlite`, () => {
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
    tests(() => store);
  });
}
