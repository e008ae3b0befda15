import { sql } from "drizzle-orm";
import type { MatchSettings } from "../../src/shards/matcher.ts";
import type { Store } from "../../src/store/db.ts";
import type { LoadOptions } from "../args.ts";
import { drive, type Workload } from "../drive/cannon.ts";
import type { SweepCell } from "../report/charts.ts";
import { sampleCpu } from "../report/cpu.ts";
import { type RunSummary, summarize } from "../report/summary.ts";
import type { Log, Target } from "../target/index.ts";
import { createUsers } from "../target/users.ts";
import { DEFAULT_TRAFFIC, generateTraffic, type TrafficPlan } from "../traffic/batches.ts";
import type { CatalogSample } from "../traffic/sample.ts";

export type ScenarioContext = {
  options: LoadOptions;
  target: Target;
  sample: CatalogSample;
  settings: MatchSettings;
  log: Log;
};

export type ScenarioOutcome = {
  runs: RunSummary[];
  ratios: Record<string, number>;
  sweep: SweepCell[] | null;
  /** The SVG chart of the runs, or null when there is nothing to draw. */
  chart: string | null;
};

export type Scenario = (context: ScenarioContext) => Promise<ScenarioOutcome>;

/** The traffic users' batches, generated up front, and the users created through the API. */
export async function prepareTraffic(
  context: ScenarioContext,
): Promise<{ plan: TrafficPlan; userIds: string[] }> {
  const { options, target, sample, settings, log } = context;
  log(`generating ${options.batches} media batches for ${options.users} users`);
  const plan = generateTraffic(sample, settings, {
    ...DEFAULT_TRAFFIC,
    seed: options.seed,
    users: options.users,
    batches: options.batches,
    batchSize: options.batchSize,
  });
  const userIds = await createUsers(target.baseUrl, target.key, plan.users);
  return { plan, userIds };
}

/** The server processes of the target database, other than the one asking. */
async function backendPids(store: Store): Promise<number[]> {
  const rows = await store.rows<{ pid: number }>(sql`
    select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
  return rows.map((row) => row.pid);
}

/** One measured run: what to send, at how many connections, against which server. */
export type Measurement = {
  connections: number;
  /**
   * The workload of the warm-up, then of the measured run: a fresh one each time starts both at the
   * first request; the read scenarios hand back one that goes on where the warm-up stopped.
   */
  workload: () => Workload;
  /** Runs between the warm-up and the measured run, e.g. to forget what the warm-up stored. */
  reset?: () => Promise<void>;
  label?: string;
  /** Another server than the target, e.g. the bare baseline. */
  against?: { target: RunSummary["target"]; baseUrl: string; pid: number };
};

/**
 * A short unmeasured warm-up (JIT, connection pools, caches), then the measured run, with the CPU split
 * of the machine sampled around it.
 */
export async function measure(context: ScenarioContext, measurement: Measurement): Promise<RunSummary> {
  const { options, target, log } = context;
  const { connections, against } = measurement;
  const label = measurement.label ?? `${options.scenario} c=${connections}`;
  const baseUrl = against?.baseUrl ?? target.baseUrl;
  const serverPid = against ? against.pid : target.serverPid;
  const run = (durationSeconds: number, runLabel: string) =>
    drive(measurement.workload(), {
      baseUrl,
      key: target.key,
      connections,
      durationSeconds,
      label: runLabel,
      sampleCpu: async () => sampleCpu(serverPid, await backendPids(target.store)),
    });
  if (options.warmupSeconds > 0) await run(options.warmupSeconds, `${label} warm-up`);
  await measurement.reset?.();
  log(`measuring ${label} for ${options.durationSeconds} s`);
  const outcome = await run(options.durationSeconds, label);
  return summarize(outcome.result, outcome.recorder, {
    label,
    target: against?.target ?? "rollcall",
    connections,
    server: against ? null : target.server,
    cpu: outcome.cpu,
  });
}
