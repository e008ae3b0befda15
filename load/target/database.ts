import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { testDatabaseUrl } from "../../test/support/environment.ts";

/** A database of its own on the test server (the admin server of test/support/environment.ts testDatabaseUrl()). */
export type LoadDatabase = {
  name: string;
  url: string;
  /**
   * What a kept database from an earlier run holds: its whole setup (reused as it is), only its catalog
   * (a scenario has since sent media, so its users are not as seeded), or nothing usable (just created).
   */
  found: "setup" | "catalog" | "nothing";
  /** Marks the setup (catalog import, seeding) as complete, so a later --keep-db run may reuse it. */
  markComplete(): Promise<void>;
  /** Marks the users as written to: a later --keep-db run keeps the catalog and seeds the users again. */
  markTouched(): Promise<void>;
  /** Drops the database unless it is kept. */
  release(): Promise<void>;
};

const MIGRATIONS = join(import.meta.dir, "..", "..", "drizzle");

/**
 * The marker of a completed setup names the migrations it was made with: a kept database from before a
 * schema change is rebuilt rather than reused (it could not even be migrated, the single initial
 * migration being regenerated on every change).
 */
function markers(): { complete: string; touched: string } {
  const hash = createHash("sha256");
  for (const file of readdirSync(MIGRATIONS)
    .filter((name) => name.endsWith(".sql"))
    .sort()) {
    hash.update(readFileSync(join(MIGRATIONS, file)));
  }
  const migrations = `migrations ${hash.digest("hex").slice(0, 16)}`;
  return {
    complete: `rollcall-load: setup complete, ${migrations}`,
    touched: `rollcall-load: catalog complete, users written to, ${migrations}`,
  };
}

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs `work` on a one-connection client of the admin server, closed afterwards. */
export async function onAdmin<T>(work: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * A throwaway database, or with `keptName` a named one that survives the run: a 10-million-item data set
 * takes minutes to load, so repeated measurements reuse it when its setup had completed.
 */
export async function openLoadDatabase(keptName: string | null): Promise<LoadDatabase> {
  const name = keptName ?? `rollcall_load_${randomBytes(6).toString("hex")}`;
  const { complete, touched } = markers();
  const found = await onAdmin(async (admin): Promise<LoadDatabase["found"]> => {
    const [existing] = await admin<{ comment: string | null }[]>`
      select shobj_description(oid, 'pg_database') as comment from pg_database where datname = ${name}`;
    if (existing?.comment === complete) return "setup";
    if (existing?.comment === touched) return "catalog";
    if (existing) await admin.unsafe(`drop database "${name}" with (force)`);
    await admin.unsafe(`create database "${name}"`);
    return "nothing";
  });
  const mark = (comment: string) =>
    onAdmin((admin) => admin.unsafe(`comment on database "${name}" is '${comment}'`)).then(() => {});
  return {
    name,
    url: withDatabaseName(testDatabaseUrl(), name),
    found,
    markComplete: () => mark(complete),
    markTouched: () => (keptName === null ? Promise.resolve() : mark(touched)),
    async release() {
      if (keptName !== null) return;
      await onAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
    },
  };
}
