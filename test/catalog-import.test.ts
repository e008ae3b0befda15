import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { fileLines, memoryLines } from "../src/store/catalog/lines.ts";
import { openStore, type Store } from "../src/store/db.ts";
import { historyPage } from "../src/store/history.ts";
import {
  baseCatalog,
  event,
  eventRows,
  lineup,
  performer,
  succeeded,
  venue,
  version,
} from "./support/catalogImport.ts";
import { createTestDatabase } from "./support/database.ts";
import { keepMedia } from "./support/userEvents.ts";

/** The same import behaviour, checked on real PostgreSQL (COPY path) and on PGlite (batch path). */

function importSuite(driver: string, open: () => Promise<{ store: Store; close(): Promise<void> }>) {
  describe(`catalog import on ${driver}`, () => {
    let store: Store;
    let close: () => Promise<void>;
    const run = (lines: string[], batch = 5000, chunkEvents?: number) =>
      importCatalog(store, memoryLines(lines, batch), chunkEvents === undefined ? {} : { chunkEvents });

    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => {
      await close();
    });

    test("imports venues, performers and events with instants in the venue's zone", async () => {
      const report = succeeded(await run(baseCatalog));
      expect(report.venues).toEqual({ inFile: 2, inserted: 2, updated: 0, unchanged: 0 });
      expect(report.performers).toEqual({ inFile: 2, inserted: 2, updated: 0, unchanged: 0 });
      expect(report.events).toEqual({ inFile: 3, inserted: 3, updated: 0, unchanged: 0 });
      const events = await eventRows(store);
      expect(
        events.map((e) => [e.id, e.starts_at.toISOString(), e.ends_at?.toISOString() ?? null, e.licensed]),
      ).toEqual([
        [100, "2025-03-09T07:30:00.000Z", null, true],
        [101, "2025-11-02T05:30:00.000Z", "2025-11-02T09:00:00.000Z", false],
        [102, "2025-10-04T16:30:00.000Z", null, true],
      ]);
      expect(await lineup(store, 100)).toEqual([
        { performer_id: 10, is_headliner: true, position: 1 },
        { performer_id: 11, is_headliner: false, position: 2 },
      ]);
      expect(await lineup(store, 102)).toEqual([{ performer_id: 11, is_headliner: null, position: 1 }]);
      const venues = await store.rows<{ id: number; radius_m: number | null; region: string | null }>(
        sql`select id, radius_m, region from venues order by id`,
      );
      expect(venues).toEqual([
        { id: 1, radius_m: 300, region: "NY" },
        { id: 2, radius_m: null, region: null },
      ]);
      expect(await version(store)).toBe(report.version);
    });

    test("leaves fresh planner statistics on the catalog tables", async () => {
      // The first test imported the base catalog; a table never analyzed (nor vacuumed) has reltuples -1.
      const tables = await store.rows<{ relname: string; reltuples: number }>(sql`
        select relname, reltuples::float8 as reltuples from pg_class
        where relname in ('venues', 'performers', 'events', 'event_performers') and relkind = 'r'
        order by relname`);
      expect(tables.map((t) => [t.relname, t.reltuples])).toEqual([
        ["event_performers", 3],
        ["events", 3],
        ["performers", 2],
        ["venues", 2],
      ]);
    });

    test("importing the same file again rewrites nothing and keeps the version", async () => {
      const before = await eventRows(store);
      const versionBefore = await version(store);
      const report = succeeded(await run(baseCatalog));
      expect(report.events).toEqual({ inFile: 3, inserted: 0, updated: 0, unchanged: 3 });
      expect(report.venues.unchanged).toBe(2);
      // Same xmin: the rows were not even rewritten with equal values.
      expect(await eventRows(store)).toEqual(before);
      expect(report.version).toBe(versionBefore);
      expect(report.correctedEvents).toBe(0);
    });

    test("upserts by id: changed fields, lineups and venue zones", async () => {
      const report = succeeded(
        await run([
          // Venue 1 moves to Chicago time: event 101 (not in this file) must get new instants too.
          venue(1, "America/Chicago", { radius_m: 250 }),
          event(100, 1, "2025-03-09T02:30:00", {
            name: "Renamed",
            performers: [
              { id: 11, is_headliner: true },
              { id: 12, is_headliner: false },
            ],
          }),
          performer(12),
        ]),
      );
      expect(report.events).toEqual({ inFile: 1, inserted: 0, updated: 1, unchanged: 0 });
      expect(report.performers.inserted).toBe(1);
      expect(report.rezonedVenues).toBe(1);
      const events = await eventRows(store);
      expect(events.map((e) => [e.id, e.name, e.starts_at.toISOString()])).toEqual([
        [100, "Renamed", "2025-03-09T08:30:00.000Z"],
        [101, "Event 101", "2025-11-02T06:30:00.000Z"],
        [102, "Event 102", "2025-10-04T16:30:00.000Z"],
      ]);
      expect(await lineup(store, 100)).toEqual([
        { performer_id: 11, is_headliner: true, position: 1 },
        { performer_id: 12, is_headliner: false, position: 2 },
      ]);
    });

    test("moving, relicensing or rezoning an event moves it in the histories that hold it", async () => {
      // Events 100 (venue 1) and 102 (venue 2); 100 is the older, so the history shows 102 first.
      const userId = "5f0c3d1e-8a7b-4c2d-9e10-000000000001";
      await store.rows(sql`insert into partners (id, name) values ('mover', 'Mover')`);
      await store.rows(sql`insert into users (id, partner_id, email, email_key)
        values (${userId}, 'mover', 'm@example.com', 'm@example.com')`);
      const startOf = new Map((await eventRows(store)).map((e) => [e.id, e.starts_at]));
      await keepMedia(store, userId, [
        { eventId: 100, startsAt: startOf.get(100) ?? new Date(0) },
        { eventId: 102, startsAt: startOf.get(102) ?? new Date(0) },
      ]);
      const order = async () => {
        const page = await historyPage(store, { partnerId: "mover", userId }, null, {
          limit: 10,
          includeMedia: false,
          minConfidence: 0,
        });
        return page?.events.map((e) => e.eventId);
      };
      expect(await order()).toEqual([102, 100]);

      // Event 102 moves to venue 1, a year earlier, and loses its licence, then gets it back.
      succeeded(
        await run([event(102, 1, "2024-06-01T20:00:00", { licensed: false, performers: [{ id: 11 }] })]),
      );
      expect(await order()).toEqual([100]);
      succeeded(await run([event(102, 1, "2024-06-01T20:00:00", { performers: [{ id: 11 }] })]));
      expect(await order()).toEqual([100, 102]);
      // Venue 1 moves from Chicago to Los Angeles time: event 100, not in this file, starts two hours later.
      succeeded(await run([venue(1, "America/Los_Angeles", { radius_m: 250 })]));
      const copies = await store.rows<{ event_id: number; copy: string; actual: string }>(sql`
        select ue.event_id, row(ue.starts_at, ue.starts_at_local, ue.venue_id, ue.licensed)::text as copy,
          row(e.starts_at, e.starts_at_local, e.venue_id, e.licensed)::text as actual
        from user_events ue join events e on e.id = ue.event_id where ue.user_id = ${userId}
        order by ue.event_id`);
      expect(copies.map((c) => [c.event_id, c.copy === c.actual, c.copy.includes(",1,t)")])).toEqual([
        [100, true, true],
        [102, true, true],
      ]);
      const moved = (await eventRows(store)).find((e) => e.id === 100);
      expect(moved?.starts_at.toISOString()).toBe("2025-03-09T10:30:00.000Z");
    });

    test("a file with bad lines reports each line number and changes nothing", async () => {
      const before = await eventRows(store);
      const versionBefore = await version(store);
      const report = await run(
        [
          venue(3, "Europe/Paris"),
          "{not json",
          "",
          event(200, 3, "2025-02-30T20:00:00"),
          event(201, 99, "2025-05-01T20:00:00"),
          venue(4, "Mars/Olympus_Mons"),
          event(202, 3, "2025-05-01T20:00:00", { performers: [{ id: 404 }] }),
          event(100, 1, "2025-03-09T02:30:00", { name: "Would rename" }),
          JSON.stringify({ type: "stage", id: 1 }),
          event(203, 3, "2025-05-01T20:00:00", { ends_at_local: "2025-05-01T19:00:00" }),
          event(204, 3, "2025-05-01T20:00:00", { name: "nul \u0000 inside" }),
          event(205, 3, "2025-05-01T20:00:00", { name: "lone \ud800 surrogate" }),
          event(206, 3, "2025-05-01T20:00:00", { name: "pair \ud83c\udfb8 is fine" }),
        ],
        2,
        1,
      );
      expect(report.ok).toBe(false);
      if (report.ok) return;
      expect(report.errors.map((e) => e.line)).toEqual([2, 4, 5, 6, 7, 9, 10, 11, 12]);
      expect(report.errorCount).toBe(9);
      expect(report.errors.find((e) => e.line === 12)?.message).toContain("unpaired surrogate");
      expect(report.errors.find((e) => e.line === 5)?.message).toContain("venue 99");
      expect(report.errors.find((e) => e.line === 7)?.message).toContain("performer 404");
      expect(await eventRows(store)).toEqual(before);
      expect(await version(store)).toBe(versionBefore);
      const [venues] = await store.rows<{ count: number }>(sql`select count(*)::int as count from venues`);
      expect(venues?.count).toBe(2);
    });

    test("name limits count characters: 1000 emoji pass, 1001 letters do not", async () => {
      const emoji = "\u{1F3B8}";
      succeeded(await run([event(310, 1, "2025-06-02T21:00:00", { name: emoji.repeat(1000) })]));
      const [row] = await store.rows<{ name: string }>(sql`select name from events where id = 310`);
      expect(row?.name).toBe(emoji.repeat(1000));
      const report = await run([event(311, 1, "2025-06-02T21:00:00", { name: "x".repeat(1001) })]);
      expect(report.ok).toBe(false);
      if (report.ok) return;
      expect(report.errors[0]?.message).toContain("at most 1000 characters");
    });

    test("events may name venues and performers defined further down the file", async () => {
      const report = succeeded(
        await run(
          [
            event(300, 5, "2025-06-01T21:00:00", { performers: [{ id: 50, is_headliner: true }] }),
            event(301, 1, "2025-06-01T21:00:00"),
            venue(5, "Asia/Tokyo"),
            performer(50),
          ],
          1,
          1,
        ),
      );
      expect(report.deferredEvents).toBe(1);
      expect(report.events.inserted).toBe(2);
      const [row] = await store.rows<{ starts_at: Date }>(sql`select starts_at from events where id = 300`);
      expect(new Date(row?.starts_at ?? 0).toISOString()).toBe("2025-06-01T12:00:00.000Z");
      expect(await lineup(store, 300)).toEqual([{ performer_id: 50, is_headliner: true, position: 1 }]);
    });

    test("an id repeated in one file takes its last line, within a chunk and across chunks", async () => {
      const lines = [
        event(400, 1, "2025-07-01T20:00:00", { name: "first" }),
        event(400, 1, "2025-07-01T20:00:00", { name: "second" }),
        event(401, 1, "2025-07-01T20:00:00", { name: "first" }),
        event(402, 1, "2025-07-01T20:00:00"),
        event(401, 1, "2025-07-01T20:00:00", { name: "last" }),
      ];
      succeeded(await run(lines));
      succeeded(await run([...lines, event(400, 1, "2025-07-01T20:00:00", { name: "third" })], 2, 2));
      const rows = await store.rows<{ id: number; name: string }>(
        sql`select id, name from events where id between 400 and 402 order by id`,
      );
      expect(rows).toEqual([
        { id: 400, name: "third" },
        { id: 401, name: "last" },
        { id: 402, name: "Event 402" },
      ]);
    });

    test("reads files: CRLF line ends, blank lines, and invalid UTF-8 reported by line", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rollcall-catalog-"));
      try {
        const good = join(dir, "good.jsonl");
        writeFileSync(good, `${venue(6, "Europe/Oslo")}\r\n\r\n${event(500, 6, "2025-08-01T20:00:00")}\r\n`);
        expect(succeeded(await importCatalog(store, fileLines(good))).events.inserted).toBe(1);
        const bad = join(dir, "bad.jsonl");
        const invalid = Buffer.concat([
          Buffer.from(`${event(501, 6, "2025-08-01T20:00:00")}\n`),
          Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]),
          Buffer.from(event(502, 6, "2025-08-01T20:00:00")),
        ]);
        writeFileSync(bad, invalid);
        const report = await importCatalog(store, fileLines(bad));
        expect(report.ok ? [] : report.errors).toEqual([{ line: 2, message: "not valid UTF-8" }]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

importSuite("PostgreSQL", async () => {
  const database = await createTestDatabase();
  return { store: database.store, close: () => database.drop() };
});

importSuite("PGlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rollcall-pglite-catalog-"));
  const store = await openStore({ databaseUrl: null, dataDir: dir });
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
