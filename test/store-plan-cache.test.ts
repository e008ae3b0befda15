import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { writeBatch } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { baseCatalog, succeeded } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/**
 * The batch statement must run on its cached generic plan on every connection (src/store/ingest.ts).
 * Left to PostgreSQL's choice, a connection whose first batches keep nothing prices the generic plan
 * against five cheap custom plans and plans the whole statement again on every later execution. One connection, so that every batch and the read of
 * its prepared statements share one session.
 */

const USER = "20000000-0000-4000-8000-000000000001";
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase(1);
  const { store } = database;
  succeeded(await importCatalog(store, memoryLines(baseCatalog, 100)));
  await createPartner(store, { id: "acme", name: "Acme" });
  await store.rows(sql`insert into users (id, partner_id, email, email_key)
    values (${USER}::uuid, 'acme', 'plans@x.example', 'plans@x.example')`);
});

afterAll(async () => {
  await database.drop();
});

test("batches that keep nothing leave the batch statement on its generic plan", async () => {
  const { store } = database;
  for (let batch = 0; batch < 8; batch++) {
    // Ids that were kept once, so the batch statement runs (a batch whose ids were never kept skips it).
    const acceptedIds = Array.from({ length: 50 }, (_, i) => `gone-${batch}-${i}`);
    await store.rows(sql`insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude,
        longitude, media_type)
      select ${USER}::uuid, id, 100, 1, now(), 40.75, -73.99, 'photo' from unnest(${sql.param(acceptedIds)}::text[]) id`);
    expect(
      await writeBatch(store, { userId: USER, partnerId: "acme", acceptedIds, kept: [] }),
    ).not.toBeNull();
  }
  const [plans] = await store.rows<{ generic: number; custom: number }>(sql`
    select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
    where statement like '%with incoming as%'`);
  expect(plans).toEqual({ generic: 8, custom: 0 });
});

test("a batch that keeps nothing and replaces nothing does not run the batch statement", async () => {
  const { store } = database;
  const acceptedIds = Array.from({ length: 50 }, (_, i) => `never-kept-${i}`);
  const [before] = await store.rows<{ runs: number }>(sql`
    select coalesce(sum(generic_plans + custom_plans), 0)::int as runs from pg_prepared_statements
    where statement like '%with incoming as%'`);
  const written = await writeBatch(store, { userId: USER, partnerId: "acme", acceptedIds, kept: [] });
  expect(written?.lastSyncAt).toBeInstanceOf(Date);
  const [after] = await store.rows<{ runs: number }>(sql`
    select coalesce(sum(generic_plans + custom_plans), 0)::int as runs from pg_prepared_statements
    where statement like '%with incoming as%'`);
  expect(after?.runs).toBe(before?.runs ?? -1);
});
