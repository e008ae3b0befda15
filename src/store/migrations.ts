import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { rowsOf } from "./store.ts";

/** Drizzle's migrations (tables only; the live SQL is in ./sql), applied by both databases at open. */
export const migrationsFolder = join(dirname(new URL(import.meta.url).pathname), "..", "..", "drizzle");

/** Runs one SQL text on whichever database is open and returns what the driver answers. */
export type RunSql = (text: string) => Promise<unknown>;

/** Which of the migrations the code ships a database has applied, and which it has not yet. */
export type SchemaState = { applied: string[]; pending: string[] };

type Journal = { entries: { tag: string; when: number }[] };

/** Every migration the code ships, oldest first: drizzle-kit's journal names and dates each one. */
function shippedMigrations(): Journal["entries"] {
  const journal = JSON.parse(
    readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8"),
  ) as Journal;
  return [...journal.entries].sort((a, b) => a.when - b.when);
}

/**
 * Reads the schema's state as Drizzle's migrator decides it: every shipped migration dated after the
 * newest one the database recorded (in `drizzle.__drizzle_migrations`) is pending, all of them on a
 * database the migrator never ran on.
 */
export async function schemaState(run: RunSql): Promise<SchemaState> {
  const [table] = rowsOf<{ present: boolean }>(
    await run("select to_regclass('drizzle.__drizzle_migrations') is not null as present"),
  );
  let newest = Number.NEGATIVE_INFINITY;
  if (table?.present === true) {
    const [row] = rowsOf<{ newest: string | number | null }>(
      await run("select max(created_at) as newest from drizzle.__drizzle_migrations"),
    );
    if (row?.newest !== null && row?.newest !== undefined) newest = Number(row.newest);
  }
  const shipped = shippedMigrations();
  return {
    applied: shipped.filter((m) => m.when <= newest).map((m) => m.tag),
    pending: shipped.filter((m) => m.when > newest).map((m) => m.tag),
  };
}

/** Told the name of each migration once it is applied, for the start log and the CLI. */
export type OnMigration = (name: string) => void;

/**
 * Runs `migrate` (the driver's Drizzle migrator, which applies every pending migration in one
 * transaction) and then names each migration it applied. The caller holds whatever lock keeps other
 * instances from migrating at the same time, so the pending list read first is what was applied.
 */
export async function migrateNamed(
  run: RunSql,
  migrate: () => Promise<void>,
  onMigration: OnMigration,
): Promise<void> {
  const { pending } = await schemaState(run);
  await migrate();
  for (const name of pending) onMigration(name);
}
