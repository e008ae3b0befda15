import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openStore, type Store } from "../../src/store/db.ts";
import { testDatabaseUrl } from "./environment.ts";

export type TestDatabase = {
  /** URL of a database created for this test file alone, already migrated. */
  url: string;
  store: Store;
  drop(): Promise<void>;
};

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * Creates a fresh, migrated database on the test server. Each test file gets its own, so files can run
 * in any order and never see each other's rows.
 */
export async function createTestDatabase(poolSize = 10): Promise<TestDatabase> {
  const adminUrl = testDatabaseUrl();
  const name = `rollcall_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = withDatabaseName(adminUrl, name);
  const store = await openStore({ databaseUrl: url, dataDir: "", poolSize });
  return {
    url,
    store,
    async drop() {
      await store.close();
      const cleanup = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}
