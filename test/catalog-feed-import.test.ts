import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { importFeed } from "../src/store/catalog/feeds/importFeed.ts";
import { lookupEvents } from "../src/store/catalog/feeds/lookup.ts";
import { openStore } from "../src/store/db.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/** `catalog import --format …` and `catalog lookup` end to end: the CLI against a test database. */

const FIXTURES = join(import.meta.dir, "fixtures", "feeds");
const TICKETMASTER = join(FIXTURES, "ticketmaster-page.json");
const SEATGEEK = join(FIXTURES, "seatgeek-pages.jsonl");
const TICKETMASTER_TBA = join(FIXTURES, "ticketmaster-tba-page.json");
const TABLES = ["venues", "performers", "events", "event_performers", "external_ids"] as const;

let database: TestDatabase;
let dir: string;
const cli = (args: string[]) => runCli(database.url, args);

async function tableCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await database.store.rows<{ count: number }>(
      sql`select count(*)::int as count from ${sql.raw(table)}`,
    );
    counts[table] = row?.count ?? -1;
  }
  return counts;
}

type Found = { id: number; name: string; status: string; time_unknown: boolean; external_ids: string[] };

async function lookup(args: string[]): Promise<Found[]> {
  const result = await cli(["catalog", "lookup", ...args, "--json"]);
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Found);
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "rollcall-feeds-"));
});

afterAll(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("catalog import --format", () => {
  test("a Ticketmaster page imports; venues without coordinates are reported with their place", async () => {
    const result = await cli(["catalog", "import", "--format", "ticketmaster", TICKETMASTER]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("events            9 read: 9 new, 0 changed, 0 unchanged");
    expect(result.stdout).toContain(
      `skipped: ${TICKETMASTER} events[9]: event vvG1zZ9pNoCoor skipped: no venue with usable coordinates`,
    );
    expect(await tableCounts()).toEqual({
      venues: 3,
      performers: 2,
      events: 9,
      event_performers: 14,
      external_ids: 14,
    });
  });

  test("importing the same feed again changes nothing", async () => {
    const before = await tableCounts();
    const ids = await database.store.rows(sql`select * from external_ids order by source, kind, external_id`);
    const events = await database.store.rows(sql`select * from events order by id`);
    const result = await cli(["catalog", "import", "--format", "ticketmaster", TICKETMASTER]);
    expect(result.code).toBe(0);
    for (const line of ["venues            3", "performers        2", "events            9"]) {
      expect(result.stdout).toMatch(new RegExp(`${line} read: 0 new, 0 changed, \\d+ unchanged`));
    }
    expect(await tableCounts()).toEqual(before);
    expect(
      await database.store.rows(sql`select * from external_ids order by source, kind, external_id`),
    ).toEqual(ids);
    expect(await database.store.rows(sql`select * from events order by id`)).toEqual(events);
  });

  test("the same show from SeatGeek links to the Ticketmaster event: one event, two external ids", async () => {
    const result = await cli(["catalog", "import", "--format", "seatgeek", SEATGEEK]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1 events are shows another source already lists: linked to them.");
    const [show, ...others] = await lookup(["--external-id", "5001", "--source", "seatgeek"]);
    expect(others).toEqual([]);
    expect(show?.external_ids).toEqual(["seatgeek:5001", "ticketmaster:vvG1zZ9pbKjzAs"]);
    expect(await lookup(["--external-id", "vvG1zZ9pbKjzAs"])).toEqual(show === undefined ? [] : [show]);
    expect((await lookup(["--date", "2025-07-04"])).map((e) => e.id)).toEqual([show?.id ?? 0]);
    const again = await cli(["catalog", "import", "--format", "seatgeek", SEATGEEK]);
    expect(again.stdout).toContain("events            4 read: 0 new, 0 changed, 4 unchanged");
  });

  test("ids are integers from the feed range, one per (source, kind, external id) unless linked", async () => {
    const rows = await database.store.rows<{ kind: string; id: number; linked: boolean }>(
      sql`select kind, id, linked from external_ids`,
    );
    expect(rows.every((r) => r.id >= 1_000_000_000)).toBe(true);
    const own = rows.filter((r) => !r.linked);
    expect(new Set(own.map((r) => `${r.kind} ${r.id}`)).size).toBe(own.length);
    expect(rows.filter((r) => r.linked)).toHaveLength(1);
  });

  test("lookup by name, venue and date; statuses and unknown times shown", async () => {
    expect(await lookup(["--name", "summer jam", "--date", "2025-07-10"])).toMatchObject([
      {
        name: "Summer Jam",
        status: "scheduled",
        time_unknown: true,
        external_ids: ["ticketmaster:vvG1zZ9pTimeTBA"],
      },
    ]);
    expect((await lookup(["--venue", "garden", "--date", "2025-07-05"])).map((e) => e.status)).toEqual([
      "cancelled",
    ]);
    const table = await cli(["catalog", "lookup", "--name", "reunion"]);
    expect(table.stdout).toContain("2025-08-01 (time unknown)");
    expect(table.stdout).toContain("date_tbd");
    expect((await cli(["catalog", "lookup", "--name", "no such show"])).stdout).toBe("No event matches.\n");
  });

  test("a known show whose date is now to be announced stops matching; an unknown one is skipped", async () => {
    const result = await cli(["catalog", "import", "--format", "ticketmaster", TICKETMASTER_TBA]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `skipped: ${TICKETMASTER_TBA} events[2]: event vvG1zZ9pNewTBA skipped: no start date`,
    );
    const [postponed] = await database.store.rows<{ status: string; starts_at_local: string }>(
      sql`select e.status, e.starts_at_local from events e
          join external_ids x on x.id = e.id and x.kind = 'event'
          where x.source = 'ticketmaster' and x.external_id = 'vvG1zZ9pbKjzAs'`,
    );
    expect(postponed).toEqual({ status: "date_tbd", starts_at_local: "2025-07-04T20:00:00" });
    expect(await lookup(["--external-id", "vvG1zZ9pNewTBA"])).toEqual([]);
    expect(await lookup(["--external-id", "vvG1VZKS5pr1qy"])).toMatchObject([
      { name: "Golf Championship - Sunday Ticket" },
    ]);
    const ids = await database.store.rows(
      sql`select 1 from external_ids where external_id = 'vvG1zZ9pNewTBA'`,
    );
    expect(ids).toEqual([]);
  });

  test("a bad page among good ones is reported with its place and nothing is imported", async () => {
    const before = await tableCounts();
    const broken = join(dir, "broken.jsonl");
    const page = JSON.parse(readFileSync(TICKETMASTER, "utf8"));
    page._embedded.events[0].id = "vvNewEventAAAA";
    writeFileSync(broken, `${JSON.stringify(page)}\n{"_embedded": {"events": [{"name": "no id"}]}}\n`);
    const result = await cli(["catalog", "import", "--format", "ticketmaster", TICKETMASTER, broken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${broken} line 2 events[0]: id: expected a string or a number`);
    expect(result.stderr).toContain("nothing was imported");
    expect(await tableCounts()).toEqual(before);
  });

  test("a record the catalog refuses is reported at its place in the feed, nothing imported", async () => {
    const before = await tableCounts();
    const page = JSON.parse(readFileSync(TICKETMASTER, "utf8"));
    page._embedded.events[0].name = "x".repeat(1001);
    page._embedded.events[0].id = "vvLongNameAAAA";
    const file = join(dir, "long.json");
    writeFileSync(file, JSON.stringify(page, null, 1));
    const result = await cli(["catalog", "import", "--format", "ticketmaster", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file} events[0]: name: expected a non-empty string of at most 1000`);
    expect(await tableCounts()).toEqual(before);
  });

  test("catalog files may not use the feed range of ids; bad formats are usage errors", async () => {
    const file = join(dir, "reserved.jsonl");
    writeFileSync(file, `${JSON.stringify({ type: "performer", id: 1_000_000_000, name: "Taken" })}\n`);
    const result = await cli(["catalog", "import", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("line 1: id: ids from 1000000000 up are given by feed imports");
    expect((await cli(["catalog", "import", "--format", "eventbrite", file])).code).toBe(2);
    expect((await cli(["catalog", "import", file, file])).code).toBe(2);
    expect((await cli(["catalog", "lookup"])).code).toBe(2);
    expect((await cli(["catalog", "lookup", "--date", "July 4"])).code).toBe(2);
  });
});

describe("feed import on the embedded database", () => {
  test("ids, links and an unchanged re-import, as on PostgreSQL", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "rollcall-feeds-pglite-"));
    const store = await openStore({ databaseUrl: null, dataDir });
    try {
      const first = await importFeed(store, "ticketmaster", [TICKETMASTER]);
      expect(first.ok && first.events.inserted).toBe(9);
      const linked = await importFeed(store, "seatgeek", [SEATGEEK]);
      expect(linked.ok && linked.linked).toBe(1);
      const again = await importFeed(store, "seatgeek", [SEATGEEK]);
      expect(again.ok && [again.events.inserted, again.events.updated, again.events.unchanged]).toEqual([
        0, 0, 4,
      ]);
      const [show] = await lookupEvents(store, {
        externalId: "5001",
        source: "seatgeek",
        name: null,
        venue: null,
        date: null,
      });
      expect(show?.external_ids).toEqual(["seatgeek:5001", "ticketmaster:vvG1zZ9pbKjzAs"]);
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
