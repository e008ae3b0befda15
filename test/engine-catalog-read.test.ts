import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { CatalogColumns } from "../src/shards/columns.ts";
import { storeCatalogSource } from "../src/shards/source.ts";
import { generateCatalog } from "../src/store/catalog/generate/index.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/**
 * The engine reads events from PostgreSQL as packed binary records, in chunks by id (src/shards/source.ts).
 * Checked against the same rows read plainly: every field of every event, across chunk edges, with
 * events that have no end and events that are not licensed.
 */

const EVENTS = 2_345;
let database: TestDatabase;

type PlainEvent = { id: number; venueId: number; starts: number; ends: number; licensed: number };

beforeAll(async () => {
  database = await createTestDatabase(2);
  const report = await importCatalog(
    database.store,
    memoryLines(generateCatalog({ events: EVENTS, seed: 7 })),
  );
  if (!report.ok) throw new Error("the generated catalog did not import");
});

afterAll(async () => {
  await database.drop();
});

/** The events as plain rows, in id order, instants as epoch milliseconds in exact (numeric) arithmetic. */
async function plainEvents(): Promise<PlainEvent[]> {
  const rows = await database.store.rows<{
    id: number;
    venue_id: number;
    starts_ms: string;
    ends_ms: string | null;
    licensed: boolean;
  }>(sql`select id, venue_id, (extract(epoch from starts_at) * 1000)::bigint::text as starts_ms,
           (extract(epoch from ends_at) * 1000)::bigint::text as ends_ms, licensed
         from events order by id`);
  return rows.map((row) => ({
    id: row.id,
    venueId: row.venue_id,
    starts: Number(row.starts_ms),
    ends: row.ends_ms === null ? Number.NaN : Number(row.ends_ms),
    licensed: row.licensed ? 1 : 0,
  }));
}

function eventsOf(columns: CatalogColumns): PlainEvent[] {
  return Array.from(columns.eventIds, (id, i) => ({
    id,
    venueId: columns.eventVenueIds[i] ?? 0,
    starts: columns.eventStarts[i] ?? 0,
    ends: columns.eventEnds[i] ?? 0,
    licensed: columns.eventLicensed[i] ?? 0,
  })).sort((a, b) => a.id - b.id);
}

describe("the engine's catalog read on PostgreSQL", () => {
  test("packed chunks give every field of every event, whatever the chunk size", async () => {
    const expected = await plainEvents();
    expect(expected).toHaveLength(EVENTS);
    expect(expected.some((event) => Number.isNaN(event.ends))).toBe(true);
    expect(expected.some((event) => event.licensed === 0)).toBe(true);
    expect(expected.some((event) => !Number.isNaN(event.ends))).toBe(true);
    for (const chunkEvents of [1_000, EVENTS, 500_000]) {
      const { columns } = await storeCatalogSource(database.store, chunkEvents).load();
      expect(eventsOf(columns)).toEqual(expected);
    }
  });

  test("an empty catalog reads as no events", async () => {
    await database.store.rows(sql`truncate events cascade`);
    const { columns } = await storeCatalogSource(database.store, 1_000).load();
    expect(columns.eventIds).toHaveLength(0);
  });
});
