import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import { batchPlanSettings } from "../src/store/batchInput.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { batchStatement } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { kept } from "./support/batchWrites.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { accessesOf, explained, type PlanNode, readsOf } from "./support/plans.ts";

/**
 * The media lookups must keep one access path whatever the statistics say. Both indexes of media lead
 * with user_id. Had the column statistics, a user they do not list (any user created since the last
 * ANALYZE) would be expected to own about one row, and the planner could take either index for either
 * lookup: a batch's probe by (user, media id) reading all of the user's media for each id, or its
 * rendering of the media list at (user, event) doing so for each event (drizzle/0005 keeps no statistics on media.user_id).
 * These tests read the plans PostgreSQL makes for such a user, and those made while media was empty.
 */

const USERS = 100;
const MEDIA_PER_USER = 200;
const NEW_USER = "10000000-0000-4000-8000-00000000abcd";

let database: TestDatabase;
const dialect = new PgDialect();

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

/**
 * Runs `work` on a connection of its own in a transaction that is rolled back, after `emptying` the
 * tables it names and analyzing them; they are analyzed again after, as ANALYZE writes a table's size in
 * place, which the rollback leaves.
 */
async function rolledBack<T>(
  emptying: { tables: string[]; by: "delete" | "truncate" } | null,
  work: (connection: postgres.ReservedSql) => Promise<T>,
): Promise<T> {
  const client = database.store.client;
  if (client === null) throw new Error("these tests need PostgreSQL");
  const connection = await client.reserve();
  try {
    await connection.unsafe("begin");
    for (const table of emptying?.tables ?? []) {
      await connection.unsafe(emptying?.by === "truncate" ? `truncate ${table}` : `delete from ${table}`);
      await connection.unsafe(`analyze ${table}`);
    }
    return await work(connection);
  } finally {
    await connection.unsafe("rollback");
    await connection.unsafe("deallocate all");
    for (const table of emptying?.tables ?? []) await connection.unsafe(`analyze ${table}`);
    connection.release();
  }
}

/** `media_replaced`'s two branches as prepared statements `probe` and `range`, under its settings. */
async function prepareMediaReplaced(connection: postgres.ReservedSql): Promise<void> {
  const [fn] = await database.store.rows<{ source: string; settings: string[] }>(
    sql`select prosrc as source, proconfig as settings from pg_proc where proname = 'media_replaced'`,
  );
  const bodies = [...(fn?.source ?? "").matchAll(/RETURN QUERY\s+([\s\S]+?);/g)].map(
    (match) => match[1] ?? "",
  );
  const probe = bodies.find((body) => body.includes("LATERAL"));
  const range = bodies.find((body) => !body.includes("LATERAL"));
  if (probe === undefined || range === undefined) throw new Error("media_replaced lost a branch");
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
  }
}

/** The plans of both branches of `media_replaced` for the new user and two ids. */
async function mediaReplacedPlans(
  connection: postgres.ReservedSql,
): Promise<Record<"probe" | "range", PlanNode>> {
  await prepareMediaReplaced(connection);
  const planOf = async (name: string) => {
    const [row] = await connection.unsafe(
      `explain (format json) execute ${name}('${NEW_USER}', array['IMG_00000001', 'IMG_00000002'])`,
    );
    const [plan] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
    if (plan === undefined) throw new Error("EXPLAIN returned no plan");
    return plan.Plan;
  };
  return { probe: await planOf("probe"), range: await planOf("range") };
}

describe("media access paths for a user the statistics do not know", () => {
  test("a batch finds the rows it replaces by primary key, one probe per id, or by the user's range", async () => {
    // Each branch as the deployed function runs it: its settings, its plan cached for any user and ids,
    // and made while media held no live row, which the plan must not depend on.
    const plans = await rolledBack({ tables: ["media"], by: "delete" }, mediaReplacedPlans);
    expect(accessesOf("media", plans.probe)).toEqual(["media_user_id_media_id_pk"]);
    // The user's items through an index that leads with the user, met with the ids in a hash.
    expect(accessesOf("media", plans.range)).not.toContain("Seq Scan");
    expect(accessesOf("media", plans.range)).toHaveLength(1);
    expect(plans.range["Node Type"]).toBe("Hash Join");
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
    const statement = batchStatement({
      userId: NEW_USER,
      partnerId: "acme",
      acceptedIds: ["IMG_00000001"],
      kept: [kept("IMG_00000001", 100)],
    });
    const query = dialect.sqlToQuery(statement);
    const explainedBatch = await rolledBack(null, async (connection) => {
      await connection.unsafe(dialect.sqlToQuery(batchPlanSettings).sql);
      return explained(connection, query.sql, query.params);
    });
    // The insert and the delete are the statement's writes. It reads media by row id for the spots of
    // the rows it replaces, and once by the (user, event) index for the rendering and the confidence.
    const reads = accessesOf("media", explainedBatch).filter((access) => access !== "ModifyTable");
    expect(reads).toEqual(["Tid Scan", "media_user_event_time_idx"]);
  });
});

describe("plans made while media is empty, as on a new deployment", () => {
  test("media_replaced reads media by index in both branches", async () => {
    const plans = await rolledBack({ tables: ["media"], by: "truncate" }, mediaReplacedPlans);
    expect([...accessesOf("media", plans.probe), ...accessesOf("media", plans.range)]).not.toContain(
      "Seq Scan",
    );
  });

  test("a batch reads media and the spot rows by row id and index", async () => {
    const statement = batchStatement({
      userId: NEW_USER,
      partnerId: "acme",
      acceptedIds: ["IMG_00000001", "IMG_00000002"],
      kept: [kept("IMG_00000001", 100), kept("IMG_00000002", 102)],
    });
    const query = dialect.sqlToQuery(statement);
    const reads = await rolledBack(
      { tables: ["media", "user_venue_spots"], by: "truncate" },
      async (connection) => {
        await connection.unsafe(dialect.sqlToQuery(batchPlanSettings).sql);
        const plan = await explained(connection, query.sql, query.params);
        return [...readsOf("media", plan), ...readsOf("user_venue_spots", plan)];
      },
    );
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((read) => read.startsWith("Seq Scan"))).toEqual([]);
  });
});

test("media_replaced plans each branch once per connection, for batches of one id too", async () => {
  const counts = await rolledBack(null, async (connection) => {
    await prepareMediaReplaced(connection);
    for (let call = 0; call < 8; call++) {
      for (const name of ["probe", "range"])
        await connection.unsafe(`execute ${name}('${NEW_USER}', array['IMG_1'])`);
    }
    const rows =
      await connection.unsafe(`select name, generic_plans::int as generic, custom_plans::int as custom
      from pg_prepared_statements where name in ('probe', 'range') order by name`);
    return rows.map(({ name, generic, custom }) => ({ name, generic, custom }));
  });
  expect(counts).toEqual([
    { name: "probe", generic: 8, custom: 0 },
    { name: "range", generic: 8, custom: 0 },
  ]);
});
