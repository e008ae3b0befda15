import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { event, succeeded, venue } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/** A catalog file's `status` and `time_unknown` (docs/operations.md §3): stored, validated, and the day's span. */

let database: TestDatabase;
const run = (lines: string[]) => importCatalog(database.store, memoryLines(lines));

type Row = {
  id: number;
  starts_at_local: string;
  starts_at: string;
  ends_at: string | null;
  status: string;
  time_unknown: boolean;
};
/** Instants as ISO text in UTC, whatever the driver makes of a timestamp. */
const rows = () =>
  database.store.rows<Row>(
    sql`select id, starts_at_local, status, time_unknown,
      to_char(starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as starts_at,
      to_char(ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as ends_at
    from events order by id`,
  );

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

test("status and time_unknown are stored; a time-unknown event spans its venue's whole local day(s)", async () => {
  succeeded(
    await run([
      venue(1, "America/New_York"),
      event(100, 1, "2025-07-04T20:00:00", { status: "cancelled" }),
      event(101, 1, "2025-07-10T19:30:00", { time_unknown: true }),
      event(102, 1, "2025-07-11T00:00:00", { time_unknown: true, ends_at_local: "2025-07-13T18:00:00" }),
      event(103, 1, "2025-07-12T20:00:00"),
    ]),
  );
  const stored = (await rows()).map((r) => [
    r.id,
    r.starts_at_local,
    r.starts_at,
    r.ends_at,
    r.status,
    r.time_unknown,
  ]);
  expect(stored).toEqual([
    [100, "2025-07-04T20:00:00", "2025-07-05T00:00:00Z", null, "cancelled", false],
    [101, "2025-07-10T00:00:00", "2025-07-10T04:00:00Z", "2025-07-11T04:00:00Z", "scheduled", true],
    [102, "2025-07-11T00:00:00", "2025-07-11T04:00:00Z", "2025-07-14T04:00:00Z", "scheduled", true],
    [103, "2025-07-12T20:00:00", "2025-07-13T00:00:00Z", null, "scheduled", false],
  ]);
});

test("a new zone moves a time-unknown event to the new zone's midnights", async () => {
  const report = succeeded(await run([venue(1, "Europe/Paris")]));
  expect(report.rezonedVenues).toBe(1);
  const [, unknown] = await rows();
  expect([unknown?.starts_at, unknown?.ends_at]).toEqual(["2025-07-09T22:00:00Z", "2025-07-10T22:00:00Z"]);
});

test("a status the catalog does not know is a bad line", async () => {
  const report = await run([event(104, 1, "2025-07-20T20:00:00", { status: "sold_out" })]);
  expect(report.ok).toBe(false);
  if (report.ok) return;
  expect(report.errors).toEqual([
    {
      line: 1,
      message:
        'status: expected one of "scheduled", "rescheduled", "postponed", "cancelled", "date_tbd", got "sold_out"',
    },
  ]);
});
