/** The first load of an empty catalog: COPY while ids ascend, upserts once they repeat or go back. */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { event, succeeded, venue } from "./support/catalogImport.ts";
import { createTestDatabase } from "./support/database.ts";

describe("first load of an empty catalog", () => {
  test("copies ascending ids straight in, and falls back to upserts once ids repeat or go back", async () => {
    const database = await createTestDatabase();
    try {
      const lines = [
        venue(1, "Europe/Madrid"),
        event(1, 1, "2025-01-01T20:00:00", { name: "one" }),
        event(2, 1, "2025-01-01T20:00:00", { name: "two" }),
        event(3, 1, "2025-01-01T20:00:00", { name: "three" }),
        event(2, 1, "2025-01-01T21:00:00", { name: "two again" }),
        event(4, 1, "2025-01-01T20:00:00", { name: "four" }),
      ];
      const report = succeeded(
        await importCatalog(database.store, memoryLines(lines, 1), { chunkEvents: 2 }),
      );
      expect(report.events).toEqual({ inFile: 4, inserted: 4, updated: 1, unchanged: 0 });
      const rows = await database.store.rows<{ id: number; name: string; starts_at: Date }>(
        sql`select id, name, starts_at from events order by id`,
      );
      expect(rows.map((r) => [r.id, r.name, new Date(r.starts_at).toISOString()])).toEqual([
        [1, "one", "2025-01-01T19:00:00.000Z"],
        [2, "two again", "2025-01-01T20:00:00.000Z"],
        [3, "three", "2025-01-01T19:00:00.000Z"],
        [4, "four", "2025-01-01T19:00:00.000Z"],
      ]);
    } finally {
      await database.drop();
    }
  });
});
