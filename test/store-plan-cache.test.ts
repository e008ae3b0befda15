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
 * Left to PostgreSQL's choice, a connection whose first batches keep nothing (the common batch: most of
 * a camera roll matches no event) prices the generic plan against five cheap custom plans and plans the
 * whole statement again on every later execution. One connection, so that every batch and the read of
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
    const acceptedIds = Array.from({ length: 50 }, (_, i) => `unmatched-${batch}-${i}`);
    expect(
      await writeBatch(store, { userId: USER, partnerId: "acme", acceptedIds, kept: [] }),
    ).not.toBeNull();
  }
  const [plans] = await store.rows<{ generic: number; custom: number }>(sql`
    select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
    where statement like '%with incoming as%'`);
  expect(plans).toEqual({ generic: 8, custom: 0 });
});
