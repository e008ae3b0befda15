import { type Config, loadConfig, variable } from "../../src/config.ts";
import { runService } from "../../src/main.ts";

/**
 * rollcall started as `bun src/main.ts` starts it, with fault drills armed, for the fault tests that run
 * it as a process (serviceProcess.ts `startService(env, { entry: DRILL_ENTRY })`). The drills are read
 * here, from variables of their own, so the production configuration holds no test hooks:
 *
 * - `DRILL_WORKER_EXIT=N`: the first N match tasks exit their worker thread (needs WORKERS > 0 and
 *   REQUEST_THREADS=1, where a matching pool runs).
 * - `DRILL_THREAD_SIGNAL=true`: SIGUSR2 ends one request thread abruptly, as a crash would (needs
 *   REQUEST_THREADS > 1, where request threads run).
 */

export const DRILL_ENTRY = "test/support/faultDrillService.ts";

export type Drills = { workerExit: number | null; threadSignal: boolean };

/** Drill variables that are set wrong, each named with what it accepts: all at once, as config.ts does. */
export class DrillError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid fault drills:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/**
 * Reads the drills strictly and checks them against the service's threads: a drill the configuration
 * gives no thread to act on would leave a fault test passing on a fault that never happened.
 */
export function drillsOf(
  read: (name: string) => string | undefined,
  { workers, requestThreads }: Pick<Config, "workers" | "requestThreads">,
): Drills {
  const problems: string[] = [];
  const exits = read("DRILL_WORKER_EXIT");
  let workerExit: number | null = null;
  if (exits !== undefined) {
    if (!/^\d+$/.test(exits) || Number(exits) < 1 || Number(exits) > 1_000_000) {
      problems.push(`DRILL_WORKER_EXIT: got ${JSON.stringify(exits)}, expected an integer from 1 to 1000000`);
    } else if (workers === 0 || requestThreads !== 1) {
      problems.push(
        `DRILL_WORKER_EXIT: got ${exits} with WORKERS=${workers} and REQUEST_THREADS=${requestThreads}, ` +
          "expected WORKERS > 0 and REQUEST_THREADS=1",
      );
    } else {
      workerExit = Number(exits);
    }
  }
  const signal = read("DRILL_THREAD_SIGNAL")?.toLowerCase();
  const threadSignal = signal === "true" || signal === "1";
  if (signal !== undefined && !threadSignal && signal !== "false" && signal !== "0") {
    problems.push(`DRILL_THREAD_SIGNAL: got ${JSON.stringify(signal)}, expected true or false (or 1 or 0)`);
  } else if (threadSignal && requestThreads === 1) {
    problems.push("DRILL_THREAD_SIGNAL: got true with REQUEST_THREADS=1, expected REQUEST_THREADS > 1");
  }
  if (problems.length > 0) throw new DrillError(problems);
  return { workerExit, threadSignal };
}

/** The drills of this process's environment, or null when its configuration is bad (runService says why). */
function drillsOfEnvironment(): Drills | null {
  let config: Config;
  try {
    config = loadConfig();
  } catch {
    return null;
  }
  return drillsOf(variable, config);
}

if (import.meta.main) {
  let drills: Drills | null;
  try {
    drills = drillsOfEnvironment();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  const { engine, serving } = await runService();
  // Armed in the turn that printed the listening line, so before the test can send its first request.
  if (drills?.workerExit) engine.injectWorkerFault("exit", drills.workerExit);
  if (drills?.threadSignal) process.on("SIGUSR2", () => serving.endOneThread());
}
