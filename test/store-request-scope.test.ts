/**
 * A request that ends early calls off its statements (src/store/requestScope.ts) without touching any
 * other request's: on a pool connection, statements of several requests are sent one behind another,
 * and the answer each one gets must be its own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { RequestAbortedError, RequestScope, withinScope } from "../src/store/requestScope.ts";
import { inOneRoundTrip } from "../src/store/roundTrip.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;

beforeAll(async () => {
  // One connection, so that every statement below is sent behind the one before it.
  database = await createTestDatabase(1);
});

afterAll(async () => {
  await database.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("statements queued behind a called-off request's answer their own requests", async () => {
  const { store } = database;
  for (let round = 0; round < 5; round++) {
    const leaving = new RequestScope(60_000);
    const staying = new RequestScope(60_000);
    const slow = withinScope(leaving, () =>
      store.rows<{ v: string }>(sql`select pg_sleep(0.3)::text as v, 'slow' as tag`),
    );
    const queued = withinScope(leaving, () => store.rows<{ v: string }>(sql`select 'queued' as v`));
    const others = withinScope(staying, () =>
      Promise.all([
        store.rows<{ w: string; n: number }>(sql`select 'other' as w, 42 as n`),
        store.rows<{ x: number }>(sql`select 7 as x`),
      ]),
    );
    await sleep(100);
    leaving.abort("client_gone");
    await Promise.allSettled([slow, queued]);
    expect(await others).toEqual([[{ w: "other", n: 42 }], [{ x: 7 }]]);
    staying.end();
  }
  // The connection is in step afterwards: a plain statement gets its own answer.
  expect(await store.rows(sql`select 'after' as v`)).toEqual([{ v: "after" }]);
}, 30_000);

/** Cancels, from outside the store, whatever runs on the backend whose statement holds `marker`. */
async function cancelRunning(marker: string): Promise<void> {
  const admin = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    for (let tries = 0; tries < 50; tries++) {
      const [row] = await admin<{ cancelled: boolean }[]>`select pg_cancel_backend(pid) as cancelled
        from pg_stat_activity where pid <> pg_backend_pid() and state = 'active' and query like ${`%${marker}%`}`;
      if (row?.cancelled) return;
      await sleep(20);
    }
    throw new Error(`no running statement holds ${marker}`);
  } finally {
    await admin.end();
  }
}

test("a pooled statement stopped by a cancel its own request did not send is sent again and answers", async () => {
  const staying = new RequestScope(60_000);
  const answer = withinScope(staying, () =>
    database.store.rows<{ tag: string }>(sql`select pg_sleep(0.3), 'stray-cancel' as tag`),
  );
  await cancelRunning("stray-cancel");
  expect((await answer).map((row) => row.tag)).toEqual(["stray-cancel"]);
  staying.end();
});

test("a Drizzle statement stopped by a cancel its own request did not send is sent again, awaited or as values", async () => {
  const staying = new RequestScope(60_000);
  // Drizzle sends a statement when it is first awaited: started here, inside the request.
  const awaited = withinScope(staying, async () => {
    const result = await database.store.db.execute(sql`select pg_sleep(0.3), 'drizzle-stray' as tag`);
    return [...(result as unknown as Iterable<{ tag: string }>)];
  });
  await cancelRunning("drizzle-stray");
  expect((await awaited).map((row) => row.tag)).toEqual(["drizzle-stray"]);
  // A select with fields is read through values().
  const selected = withinScope(staying, async () =>
    database.store.db
      .select({ tag: sql<string>`'drizzle-values'`, slept: sql`pg_sleep(0.3)` })
      .from(sql`(select 1) as one`)
      .then((rows) => rows),
  );
  await cancelRunning("drizzle-values");
  expect((await selected).map((row) => row.tag)).toEqual(["drizzle-values"]);
  staying.end();
});

test("a transaction stopped by a cancel its own request did not send runs again whole, and stores once", async () => {
  const { store } = database;
  await store.rows(sql`create table if not exists stray_writes (tag text not null)`);
  const staying = new RequestScope(60_000);
  const roundTrip = withinScope(staying, () =>
    inOneRoundTrip(store, [
      sql`insert into stray_writes values ('round trip')`,
      sql`select pg_sleep(0.3), 'round-trip-stray' as tag`,
    ]),
  );
  await cancelRunning("round-trip-stray");
  expect((await roundTrip)[1]).toEqual([{ pg_sleep: "", tag: "round-trip-stray" }]);
  const transaction = withinScope(staying, () =>
    store.transaction(async (tx) => {
      await tx.rows(sql`insert into stray_writes values ('callback')`);
      return tx.rows<{ tag: string }>(sql`select pg_sleep(0.3), 'transaction-stray' as tag`);
    }),
  );
  await cancelRunning("transaction-stray");
  expect((await transaction).map((row) => row.tag)).toEqual(["transaction-stray"]);
  staying.end();
  expect(
    await store.rows(sql`select tag, count(*)::int as n from stray_writes group by tag order by tag`),
  ).toEqual([
    { tag: "callback", n: 1 },
    { tag: "round trip", n: 1 },
  ]);
});

test("a statement its own request called off is not sent again", async () => {
  const leaving = new RequestScope(60_000);
  const answer = withinScope(leaving, () =>
    database.store.rows(sql`select pg_sleep(0.3), 'own-cancel' as tag`),
  );
  await sleep(100);
  leaving.abort("client_gone");
  expect(
    await answer.then(
      () => null,
      (error: unknown) => error,
    ),
  ).toBeInstanceOf(RequestAbortedError);
});
