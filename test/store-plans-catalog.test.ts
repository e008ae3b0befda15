import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { batchPlanSettings } from "../src/store/batchInput.ts";
import type { StagedEvent } from "../src/store/catalog/assembler.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { mergeEventChunk, prepareImport } from "../src/store/catalog/merge.ts";
import { type CatalogTransaction, withCatalogTransaction } from "../src/store/catalog/transaction.ts";
import { userConfidenceUpdate } from "../src/store/confidenceSql.ts";
import { eventCores } from "../src/store/eventDetails.ts";
import { batchStatement } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { kept } from "./support/batchWrites.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { explained, type PlanNode, planNodes, readsOf } from "./support/plans.ts";

/**
 * Plans whose cost must follow the rows a statement asks for, not the size of the catalog: each reads
 * events or their billing by key where, on a catalog this size, the planner would otherwise rather read
 * the whole table. Users keep their items at twenty events each, with spot rows, as batches leave them.
 */

const FIRST_EVENT = 1000;
const EVENTS = 20_000;
const USERS = 100;
const EVENTS_PER_USER = 20;
const ITEMS_PER_EVENT = 10;
const USER = "00000000-0000-4000-8000-000000000001";

const dialect = new PgDialect();
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase(2);
  const { store } = database;
  succeeded(await importCatalog(store, memoryLines(baseCatalog, 100)));
  await createPartner(store, { id: "acme", name: "Acme" });
  await store.rows(sql`
    insert into events (id, name, venue_id, starts_at_local, starts_at, licensed)
    select ${FIRST_EVENT} + e, 'Event ' || e, 1, '2025-01-01T20:00:00',
           timestamptz '2025-01-01 20:00Z' + e * interval '1 hour', true
    from generate_series(0, ${EVENTS - 1}) e`);
  await store.rows(sql`
    insert into event_performers (event_id, performer_id, is_headliner, position)
    select e.id, p, p = 10, p - 9 from events e cross join unnest(array[10, 11]) p
    where e.id >= ${FIRST_EVENT}`);
  await store.rows(sql`
    insert into users (id, partner_id, email, email_key)
    select ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'acme', 'u' || u || '@x.example',
           'u' || u || '@x.example'
    from generate_series(1, ${USERS}) u`);
  await store.rows(sql`
    insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude, media_type,
                       spot_row, spot_col, in_core, weight)
    select ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'IMG_' || u || '_' || k || '_' || i,
           ${FIRST_EVENT} + (u * 97 + k * 13) % ${EVENTS}, 1, now(), 40.75, -73.99, 'photo', i % 5, i % 3,
           i % 5 = 0, 1
    from generate_series(1, ${USERS}) u, generate_series(1, ${EVENTS_PER_USER}) k,
         generate_series(1, ${ITEMS_PER_EVENT}) i`);
  await store.rows(sql`
    insert into user_events (user_id, event_id, starts_at, starts_at_local, venue_id, licensed, media_count,
                             photo_count)
    select m.user_id, m.event_id, e.starts_at, e.starts_at_local, e.venue_id, e.licensed, count(*), count(*)
    from media m join events e on e.id = m.event_id group by 1, 2, 3, 4, 5, 6`);
  await store.rows(sql`
    insert into user_venue_spots (user_id, venue_id, spot_row, spot_col, event_id, items, core_items)
    select user_id, venue_id, spot_row, spot_col, event_id, count(*), count(*) filter (where in_core)
    from media group by 1, 2, 3, 4, 5`);
  await store.rows(sql`analyze`);
});

afterAll(async () => {
  await database.drop();
});

function client() {
  const client = database.store.client;
  if (client === null) throw new Error("these tests need PostgreSQL");
  return client;
}

describe("catalog rows read by key on a mid-sized catalog", () => {
  test("a page's event facts are read with one primary-key probe per event", async () => {
    const eventIds = Array.from({ length: 100 }, (_, i) => FIRST_EVENT + i * 199);
    const { sql: text, params } = eventCores({ eventIds }).query;
    expect(readsOf("events", await explained(client(), text, params))).toEqual(["events_pkey: (id = r.id)"]);
  });

  test("a batch looks up each event it recounts with one primary-key probe", async () => {
    const items = Array.from({ length: 20 }, (_, i) => kept(`IMG_new_${i}`, FIRST_EVENT + i * 500));
    const statement = batchStatement({
      userId: USER,
      partnerId: "acme",
      acceptedIds: items.map((item) => item.mediaId),
      kept: items,
    });
    const { sql: text, params } = dialect.sqlToQuery(statement);
    const plan = await client().begin(async (tx) => {
      await tx.unsafe(dialect.sqlToQuery(batchPlanSettings).sql);
      return explained(tx, text, params);
    });
    expect(readsOf("events", plan)).toEqual(["events_pkey: (id = k.event_id)"]);
  });

  test("an import deletes the stale billing of a chunk of its events by one probe per event", async () => {
    const chunk = Array.from(
      { length: 500 },
      (_, i): StagedEvent => ({
        line: i + 1,
        id: FIRST_EVENT + i * 40,
        name: `Event ${i * 40}`,
        venueId: 1,
        startsAtLocal: "2025-01-01T20:00:00",
        endsAtLocal: null,
        startsMs: Date.UTC(2025, 0, 1, 20) + i * 40 * 3_600_000,
        endsMs: null,
        licensed: true,
        status: "scheduled",
        timeUnknown: false,
        performerIds: [11],
        headliners: [null],
      }),
    );
    const plans: PlanNode[] = [];
    const rolledBack = new Error("rolled back");
    const merged = withCatalogTransaction(database.store, async (tx) => {
      // The import's own statements, with the plan of each delete of billing read first.
      const explaining: CatalogTransaction = {
        bulk: (table) => tx.bulk(table),
        query: async <T>(text: string) => {
          if (text.startsWith("delete from event_performers")) {
            const [row] = await tx.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
              `explain (format json) ${text}`,
            );
            const plan = row?.["QUERY PLAN"][0]?.Plan;
            if (plan !== undefined) plans.push(plan);
          }
          return tx.query<T>(text);
        },
      };
      await prepareImport(explaining);
      await mergeEventChunk(explaining, chunk, false);
      throw rolledBack;
    });
    await expect(merged).rejects.toBe(rolledBack);
    expect(plans.map((plan) => readsOf("event_performers", plan))).toEqual([
      ["event_performers_event_id_performer_id_pk: (event_id = s.id)"],
    ]);
  });
});

/** The type of each join that reads the items CTE itself, directly or through the hash it builds. */
function joinsReadingItems(plan: PlanNode): string[] {
  const readsItems = (node: PlanNode): boolean =>
    node["CTE Name"] === "event_items" ||
    (node["Node Type"] === "Hash" && (node.Plans ?? []).some(readsItems));
  return planNodes(plan)
    .filter((node) => ["Hash Join", "Merge Join", "Nested Loop"].includes(node["Node Type"]))
    .filter((node) => (node.Plans ?? []).some(readsItems))
    .map((node) => node["Node Type"]);
}

test("the confidence backfill meets a user's items with the routine cells in hashes", async () => {
  const { sql: text, params } = dialect.sqlToQuery(userConfidenceUpdate(USER, 300));
  const joins = joinsReadingItems(await explained(client(), text, params));
  expect(joins.length).toBeGreaterThan(0);
  expect(joins.filter((join) => join !== "Hash Join")).toEqual([]);
});
