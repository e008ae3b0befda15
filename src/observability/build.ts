import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Which build of the service is running: in the start log, `/v1/health`, `rollcall_build_info` and `cli status`. */
export type BuildInfo = { version: string; commit: string | null };

const root = join(dirname(new URL(import.meta.url).pathname), "..", "..");

/** A commit lookup that hangs (a network file system) must not hold the start up for long. */
const GIT_TIMEOUT_MS = 2000;

/**
 * The checkout's commit, or null when the code does not run from a git checkout of its own (a release
 * unpacked without `.git`, or git not installed): the version alone then names the build. The
 * checkout may belong to another user than the service's, which git refuses to read unless told it is
 * safe, and reading a commit is all this does.
 */
function gitCommit(): string | null {
  if (!existsSync(join(root, ".git"))) return null;
  try {
    const result = spawnSync("git", ["-c", "safe.directory=*", "rev-parse", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: GIT_TIMEOUT_MS,
    });
    const commit = result.status === 0 ? result.stdout.trim() : "";
    return /^[0-9a-f]{40,64}$/.test(commit) ? commit : null;
  } catch {
    return null;
  }
}

let build: BuildInfo | null = null;

/** package.json's version and the commit, read once per thread (at its start: callers ask then). */
export function buildInfo(): BuildInfo {
  if (build === null) {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    build = Object.freeze({ version, commit: gitCommit() });
  }
  return build;
}
