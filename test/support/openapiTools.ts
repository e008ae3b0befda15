import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { run } from "./processes.ts";

/** The repository's root and the TypeScript client's package, whose tools generate its types. */
export const REPOSITORY = resolve(import.meta.dir, "../..");
export const CLIENT_PACKAGE = join(REPOSITORY, "clients/typescript");

/**
 * The tools a partner points at the document, run as installed, with Node as their authors run them.
 * Nothing may call home: Redocly's telemetry and update notices are off, so the run works offline.
 */
const TOOL_ENVIRONMENT = {
  ...process.env,
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  NO_UPDATE_NOTIFIER: "1",
};

/** A package's script, found from `from` as Node would find the package (npm may nest it). */
const script = (from: string, name: string, path: string) =>
  join(dirname(Bun.resolveSync(`${name}/package.json`, from)), path);

const TOOLS = {
  redocly: () => script(REPOSITORY, "@redocly/cli", "bin/cli.js"),
  spectral: () => script(REPOSITORY, "@stoplight/spectral-cli", "dist/index.js"),
  "openapi-typescript": () => script(CLIENT_PACKAGE, "openapi-typescript", "bin/cli.js"),
  tsc: () => script(REPOSITORY, "typescript", "bin/tsc"),
};

export async function runTool(tool: keyof typeof TOOLS, args: string[]) {
  return run(["node", TOOLS[tool](), ...args], 120_000, TOOL_ENVIRONMENT);
}

/**
 * A scratch folder whose `node_modules` is the repository's, so code written there resolves
 * `openapi-fetch` as a partner's project would. `remove` deletes it.
 */
export function scratchFolder(files: Record<string, string> = {}): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rollcall-openapi-"));
  symlinkSync(join(REPOSITORY, "node_modules"), join(dir, "node_modules"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
