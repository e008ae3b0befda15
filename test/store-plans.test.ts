import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { batchStatement } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { kept } from "./support/batchWrites.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/**
 * The media lookups must keep one access path whatever the statistics say. Both indexes of media lead
 * with user_id. Had the column statistics, a user they do not list (any user created since the last
 * ANALYZE) would be expected to own about one row, and the planner could take either index for either
 * lookup: a batch's probe by (user, media id) reading all of the user's media for each id, or its
 * rendering of the media list at (user, event) doing so for each event (drizzle/0005 keeps no statistics on media.user_id).
 * These tests read the plans PostgreSQL makes for such a user.
 */

const USERS = 100;
const MEDIA_PER_USER = 200;
const NEW_USER = "10000000-0000-4000-8000-00000000abcd";

let database: TestDatabase;

type PlanNode = { "Relation Name"?: string; "Index Name"?: string; "Node Type": string; Plans?: PlanNode[] };

/** The index each read of media descends (a bitmap scan's through its index scans), else the scan type. */
function mediaAccess(node: PlanNode): string[] {
  if (node["Relation Name"] !== "media") return (node.Plans ?? []).flatMap(mediaAccess);
  const bitmapIndexes = (node.Plans ?? []).flatMap((child) => child["Index Name"] ?? []);
  return [node["Index Name"] ?? (bitmapIndexes.length > 0 ? bitmapIndexes.join("+") : node["Node Type"])];
}

beforeAll(async () => {
  database = await createTestDatabase(2);
  const { store } = database;
  succeeded(await importCatalog(store, memoryLines(baseCatalog, 100)));
  await createPartner(store, { id: "acme", name: "Acme" });
  await store.rows(sql`
    insert into users (id, partner_id, email, email_key)
    select ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, 'acme', 'u' || u || '@x.example',
           'u' || u || '@x.example'
    from generate_series(1, ${USERS}) u`);
  await store.rows(sql`
    insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude, media_type)
    select ('00000000-0000-4000-8000-' || lpad((1 + i % ${USERS})::text, 12, '0'))::uuid,
           'IMG_' || lpad(i::text, 8, '0'), 100 + i % 3, 1, now(), 40.75, -73.99, 'photo'
    from generate_series(1, ${USERS * MEDIA_PER_USER}) i`);
  await store.rows(sql`analyze media`);
});

afterAll(async () => {
  await database.drop();
});

describe("media access paths for a user the statistics do not know", () => {
  test("a batch finds the rows it replaces by primary key, one probe per id, or by the user's range", async () => {
    const client = database.store.client;
    if (client === null) throw new Error("these tests need PostgreSQL");
    const [fn] = await database.store.rows<{ source: string; settings: string[] }>(
      sql`select prosrc as source, proconfig as settings from pg_proc where proname = 'media_replaced'`,
    );
    const bodies = [...(fn?.source ?? "").matchAll(/RETURN QUERY\s+([\s\S]+?);/g)].map(
      (match) => match[1] ?? "",
    );
    const probe = bodies.find((body) => body.includes("LATERAL"));
    const range = bodies.find((body) => !body.includes("LATERAL"));
    if (probe === undefined || range === undefined) throw new Error("media_replaced lost a branch");
    // Each branch as the deployed function runs it: its settings, its plan cached for any user and ids,
    // and made while media looked empty (a new deployment), which the plan must not depend on. The
    // rows come back with the rollback; the table's size, which ANALYZE writes in place, with another.
    const connection = await client.reserve();
    const plans: { Plan: PlanNode }[] = [];
    try {
      await connection.unsafe("begin");
      await connection.unsafe("delete from media");
      await connection.unsafe("analyze media");
      for (const setting of fn?.settings ?? []) {
        const [name, value] = setting.split("=");
        await connection.unsafe("select set_config($1, $2, true)", [name ?? "", value ?? ""]);
      }
      for (const [name, body] of [
        ["probe", probe],
        ["range", range],
      ] as const) {
        const bound = body.replaceAll("batch_user", "$1").replaceAll("batch_ids", "$2");
        await connection.unsafe(`prepare ${name}(uuid, text[]) as ${bound}`);
        const [row] = await connection.unsafe(
          `explain (format json) execute ${name}('${NEW_USER}', array['IMG_00000001', 'IMG_00000002'])`,
        );
        const [plan] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
        if (plan === undefined) throw new Error("EXPLAIN returned no plan");
        plans.push(plan);
      }
    } finally {
      await connection.unsafe("rollback");
      await connection.unsafe("deallocate all");
      await connection.unsafe("analyze media");
      connection.release();
    }
    const [probePlan, rangePlan] = plans;
    if (probePlan === undefined || rangePlan === undefined) throw new Error("a branch was not explained");
    expect(mediaAccess(probePlan.Plan)).toEqual(["media_user_id_media_id_pk"]);
    // The user's items through an index that leads with the user, met with the ids in a hash.
    expect(mediaAccess(rangePlan.Plan)).not.toContain("Seq Scan");
    expect(mediaAccess(rangePlan.Plan)).toHaveLength(1);
    expect(rangePlan.Plan["Node Type"]).toBe("Hash Join");
  });

  test("both ways of finding the rows a batch replaces find the same rows", async () => {
    const user = "00000000-0000-4000-8000-000000000001";
    const stored = await database.store.rows<{ media_id: string }>(
      sql`select media_id from media where user_id = ${user}::uuid order by media_id limit 3`,
    );
    const ids = [...stored.map((row) => row.media_id), "IMG_not_kept"];
    // The user keeps 200 items and no history rows here: few enough for the range with any ids, so
    // the history rows that send a user to the probes are written for the second call.
    const found = async () =>
      (
        await database.store.rows<{ id: string }>(
          sql`select replaced_media_id as id from media_replaced(${user}::uuid, ${sql.param(ids)}::text[]) order by 1`,
        )
      ).map((row) => row.id);
    const byRange = await found();
    await database.store.rows(sql`
      insert into user_events (user_id, event_id, starts_at, starts_at_local, venue_id, licensed, media_count)
      select ${user}::uuid, e.id, e.starts_at, e.starts_at_local, e.venue_id, e.licensed, 200
      from events e order by e.id limit 64`);
    const byProbe = await found();
    expect(byRange).toEqual(stored.map((row) => row.media_id));
    expect(byProbe).toEqual(byRange);
  });

  test("a batch renders an event's media list from the (user, event) index", async () => {
    const client = database.store.client;
    if (client === null) throw new Error("these tests need PostgreSQL");
    const statement = batchStatement({
      userId: NEW_USER,
      partnerId: "acme",
      acceptedIds: ["IMG_00000001"],
      kept: [kept("IMG_00000001", 100)],
    });
    const query = new PgDialect().sqlToQuery(statement);
    // As the server runs it: index paths only (`batchPlanSettings` in src/store/batchInput.ts).
    const [row] = await client.begin(async (tx) => {
      await tx.unsafe("set local enable_seqscan = off");
      return tx.unsafe(`explain (format json) ${query.sql}`, query.params as never[]);
    });
    const [explained] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
    if (explained === undefined) throw new Error("EXPLAIN returned no plan");
    // The insert and the delete are the statement's writes. It reads media by row id for the spots of
    // the rows it replaces, and once by the (user, event) index for the rendering and the confidence.
    const reads = mediaAccess(explained.Plan).filter((access) => access !== "ModifyTable");
    expect(reads).toEqual(["Tid Scan", "media_user_event_time_idx"]);
  });
});
