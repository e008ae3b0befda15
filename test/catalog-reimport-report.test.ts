/** What a re-import reports: an event whose billing alone changed is changed, and counted once. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { event, lineup, performer, succeeded, venue } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

const billed = (id: number, performers: { id: number; is_headliner?: boolean }[], name = `Event ${id}`) =>
  event(id, 1, "2025-07-04T20:00:00", { name, performers });

const eventCounts = async (lines: string[]) =>
  succeeded(await importCatalog(database.store, memoryLines(lines, 1), {})).events;

describe("re-import report", () => {
  test("reordering, re-flagging or dropping a performer changes the event; an identical file changes nothing", async () => {
    const acts = [performer(10), performer(11), performer(12)];
    const first = [
      billed(1, [{ id: 10 }, { id: 11 }]),
      billed(2, [{ id: 10 }, { id: 11 }]),
      billed(3, [{ id: 10 }, { id: 11 }]),
      billed(4, [{ id: 10 }]),
    ];
    expect(await eventCounts([venue(1, "UTC"), ...acts, ...first])).toMatchObject({ inserted: 4 });
    expect(await eventCounts([venue(1, "UTC"), ...acts, ...first])).toEqual({
      inFile: 4,
      inserted: 0,
      updated: 0,
      unchanged: 4,
    });
    const second = [
      billed(1, [{ id: 11 }, { id: 10 }]),
      billed(2, [{ id: 10, is_headliner: true }, { id: 11 }]),
      billed(3, [{ id: 10 }]),
      billed(4, [{ id: 10 }, { id: 12 }], "Renamed and rebilled"),
    ];
    expect(await eventCounts([venue(1, "UTC"), ...acts, ...second])).toEqual({
      inFile: 4,
      inserted: 0,
      updated: 4,
      unchanged: 0,
    });
    expect((await lineup(database.store, 1)).map((pair) => pair.performer_id)).toEqual([11, 10]);
    expect((await lineup(database.store, 3)).map((pair) => pair.performer_id)).toEqual([10]);
  });
});
