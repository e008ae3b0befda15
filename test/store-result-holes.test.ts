/**
 * A statement that fails after sending rows leaves its connection's row count where it stopped, and
 * the driver places the next result's rows after that many holes (src/store/resultHoles.ts). Every
 * pooled way the store reads rows must still hand over that next result whole. One connection a pool,
 * so the next statement meets the same connection.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type SQL, sql } from "drizzle-orm";
import { users } from "../src/store/schema/users.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase(1);
});

afterAll(async () => {
  await database.drop();
});

/** Sends three rows, then fails on the fourth (division by zero). */
const failsAfterRows = sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`;
const fiveRows = sql`select x from generate_series(1, 5) x`;
const five = [1, 2, 3, 4, 5].map((x) => ({ x }));

test("a pooled statement after one that failed mid-result gets all its rows", async () => {
  await expect(database.store.rows(failsAfterRows)).rejects.toThrow("division by zero");
  expect(await database.store.rows(fiveRows)).toEqual(five);
});

test("... on the read pool", async () => {
  await expect(database.store.read(failsAfterRows)).rejects.toThrow("division by zero");
  expect(await database.store.read(fiveRows)).toEqual(five);
});

const builderRows = async (statement: SQL) => [
  ...((await database.store.db.execute(statement)) as unknown[]),
];

test("... through the query builder's raw statements", async () => {
  await expect(builderRows(failsAfterRows)).rejects.toThrow("Failed query");
  expect(await builderRows(fiveRows)).toEqual(five);
});

test("... and its selects, which read values", async () => {
  await expect(builderRows(failsAfterRows)).rejects.toThrow("Failed query");
  const counted = await database.store.db.select({ n: sql<number>`count(*)::int` }).from(users);
  expect(counted).toEqual([{ n: 0 }]);
});
