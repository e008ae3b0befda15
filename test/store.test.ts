import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { EmbeddedDatabaseBusyError, openStore, type Store } from "../src/store/db.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

const expectedTables = [
  "api_keys",
  "catalog_corrections",
  "catalog_state",
  "event_performers",
  "events",
  "external_ids",
  "media",
  "partners",
  "performers",
  "service_settings",
  "user_event_media",
  "user_events",
  "user_venue_spots",
  "users",
  "venues",
];

async function tablesOf(store: Store): Promise<string[]> {
  const rows = await store.rows<{ name: string }>(
    sql`select table_name as name from information_schema.tables where table_schema = 'public' order by 1`,
  );
  return rows.map((r) => r.name);
}

describe("store on PostgreSQL", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  test("migrations create every table", async () => {
    expect(await tablesOf(database.store)).toEqual(expectedTables);
  });

  test("migrating an already migrated database changes nothing", async () => {
    const again = await openStore({ databaseUrl: database.url, dataDir: "" });
    expect(await tablesOf(again)).toEqual(expectedTables);
    await again.close();
  });
});

describe("store on PGlite", () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rollcall-pglite-"));
    store = await openStore({ databaseUrl: null, dataDir: dir });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("migrations create every table", async () => {
    expect(await tablesOf(store)).toEqual(expectedTables);
  });

  test("a second opener of the same directory is refused while the first holds it", async () => {
    await expect(openStore({ databaseUrl: null, dataDir: dir })).rejects.toBeInstanceOf(
      EmbeddedDatabaseBusyError,
    );
  });
});

describe("the embedded database lock", () => {
  test("is released on close and taken over from a process that died", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rollcall-pglite-lock-"));
    try {
      const first = await openStore({ databaseUrl: null, dataDir: dir });
      await first.close();
      writeFileSync(join(dir, "rollcall.pid"), "2147483646");
      const second = await openStore({ databaseUrl: null, dataDir: dir });
      expect(await tablesOf(second)).toEqual(expectedTables);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
