/**
 * The store's functions live in src/store/sql (src/store/liveSql.ts): every start applies them after the
 * migrations, so the database runs exactly what those files say, on PostgreSQL and on PGlite, and a
 * second start changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openStore, type Store } from "../src/store/db.ts";
import { liveStatements } from "../src/store/liveSql.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/** Each live function's name and body, as its file writes it. */
const liveFunctions = liveStatements().flatMap((statement) => {
  const name = /CREATE OR REPLACE FUNCTION (\w+)\(/.exec(statement)?.[1];
  const body = /AS \$\$\n([\s\S]*)\$\$;?$/.exec(statement)?.[1];
  return name === undefined || body === undefined ? [] : [{ name, body }];
});

async function bodiesIn(store: Store): Promise<Map<string, string>> {
  const rows = await store.rows<{ name: string; body: string }>(
    sql`select proname as name, prosrc as body from pg_proc
        where proname = any(${sql.param(liveFunctions.map((f) => f.name))}::text[])`,
  );
  return new Map(rows.map((row) => [row.name, row.body.replace(/^\n/, "")]));
}

const expected = () => new Map(liveFunctions.map((f) => [f.name, f.body]));

test("every statement of the folder can be applied again: a function replaced, or one retired if it exists", () => {
  expect(liveFunctions.length).toBeGreaterThanOrEqual(4);
  for (const statement of liveStatements()) {
    expect(statement).toMatch(/^(--.*\n)*(CREATE OR REPLACE FUNCTION|DROP FUNCTION IF EXISTS) /);
  }
});

describe("on PostgreSQL", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(2);
  });
  afterAll(async () => {
    await database.drop();
  });

  test("the functions run what the files say, and a start puts back a body changed by hand", async () => {
    expect(await bodiesIn(database.store)).toEqual(expected());
    await database.store.rows(
      sql.raw(`create or replace function media_replaced(batch_user uuid, batch_ids text[])
        returns table (row_id tid, replaced_media_id text, replaced_event_id integer, replaced_media_type text)
        language sql stable as $$ select null::tid, null::text, null::integer, null::text where false $$`),
    );
    expect((await bodiesIn(database.store)).get("media_replaced")).not.toBe(expected().get("media_replaced"));
    const again = await openStore({ databaseUrl: database.url, dataDir: "", poolSize: 1 });
    try {
      expect(await bodiesIn(again)).toEqual(expected());
    } finally {
      await again.close();
    }
  });
});

describe("on PGlite", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "rollcall-live-sql-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test("the same bodies, and opening it again changes nothing", async () => {
    for (let start = 0; start < 2; start++) {
      const store = await openStore({ databaseUrl: null, dataDir });
      try {
        expect(await bodiesIn(store)).toEqual(expected());
      } finally {
        await store.close();
      }
    }
  }, 60_000);
});
