import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The live bodies of the database functions the store calls, one file each in `src/store/sql`, beside
 * the TypeScript that calls them. Migrations change tables only (what they once said of a function is
 * history); these files are what runs. Every start applies them all after the migrations, under the
 * migration lock, each written with CREATE OR REPLACE so that applying them again changes nothing.
 */
const folder = join(dirname(new URL(import.meta.url).pathname), "sql");

/** A file may hold several statements, separated as Drizzle's migrations separate theirs. */
const BREAKPOINT = "--> statement-breakpoint";

/** Every statement of the folder, file by file in name order. */
export function liveStatements(): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .flatMap((name) => readFileSync(join(folder, name), "utf8").split(BREAKPOINT))
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");
}

/** Applies every live statement with `run`, in order. */
export async function applyLiveSql(run: (statement: string) => Promise<unknown>): Promise<void> {
  for (const statement of liveStatements()) await run(statement);
}
