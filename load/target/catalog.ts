import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { processEnv } from "../../src/config.ts";

/** Generated catalogs and server logs live here, never in the repository. */
export const WORK_DIR = "/tmp/rollcall-load";

const REPO = join(import.meta.dir, "..", "..");

async function runCli(
  args: string[],
  env: Record<string, string>,
  stdoutPath: string | null,
): Promise<string> {
  const child = Bun.spawn(["bun", "run", "--silent", "cli", ...args], {
    cwd: REPO,
    env: { ...processEnv(), ...env },
    stdout: stdoutPath === null ? "pipe" : Bun.file(stdoutPath),
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([
    child.exited,
    child.stdout instanceof ReadableStream ? new Response(child.stdout).text() : Promise.resolve(""),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`bun run cli ${args.join(" ")} failed (exit ${code}):\n${stderr.trim()}`);
  return stdout;
}

/**
 * Generates the catalog file for (events, seed) with the operator CLI, under /tmp. It is regenerated
 * every time (seconds, against the minute its import takes) so it always comes from the current generator.
 */
export async function catalogFile(events: number, seed: number): Promise<string> {
  mkdirSync(WORK_DIR, { recursive: true });
  const path = join(WORK_DIR, `catalog-${events}-${seed}.jsonl`);
  const partial = `${path}.partial`;
  await runCli(["catalog", "generate", "--events", String(events), "--seed", String(seed)], {}, partial);
  renameSync(partial, path);
  return path;
}

/** Imports a catalog file into the database with `bun run cli catalog import`. */
export async function importCatalog(databaseUrl: string, path: string): Promise<void> {
  await runCli(["catalog", "import", path], { DATABASE_URL: databaseUrl }, null);
}
