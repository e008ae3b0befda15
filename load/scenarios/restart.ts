import { readFileSync, writeFileSync } from "node:fs";
import type { MatchSettings } from "../../src/shards/matcher.ts";
import type { Store } from "../../src/store/db.ts";
import { isRunning } from "../../test/support/processes.ts";
import type { LoadOptions } from "../args.ts";
import type { Workload } from "../drive/cannon.ts";
import { startLoops } from "../drive/fetchLoops.ts";
import { historyWorkload, ingestWorkload, statsWorkload } from "../drive/workloads.ts";
import { describeMachine } from "../report/machine.ts";
import { restartChart } from "../report/restartChart.ts";
import { findingsLines, restartFindings, restartProblems } from "../report/restartReport.ts";
import { RESULTS_DIR, resultBase } from "../report/write.ts";
import { catalogCounts, type Log } from "../target/index.ts";
import { openPrivateTarget } from "../target/privateTarget.ts";
import { createUsers, forgetMedia, keptUsers } from "../target/users.ts";
import { DEFAULT_TRAFFIC, generateTraffic } from "../traffic/batches.ts";
import { readCatalogSample } from "../traffic/sample.ts";

export type RestartRun = {
  options: LoadOptions;
  /** The command line after `bun run load --`, for the report. */
  argv: string[];
  settings: MatchSettings;
  /** Loads the kept users the reads go to (run.ts's --kept-items seeding). */
  prepare: (store: Store, partnerId: string) => Promise<void>;
  log: Log;
};

const SAMPLE_EVENTS = 100_000;
/** Past the service's 8 s deadline and the runtime's 10 s idle timeout, so every request gets its answer. */
const REQUEST_TIMEOUT_MS = 12_000;
/**
 * The server's log events that tell the fault's story, counted from its log file: the database's
 * absence as the server saw it, and any thread or worker it had to replace (the process may stay up
 * while a request thread dies).
 */
const LOG_EVENTS = [
  "database_unavailable",
  "database_recovered",
  "database_request_failed",
  "request_deadline",
  "internal_error",
  "uncaught_error",
  "request_thread_failed",
  "request_thread_replaced",
  "worker_replaced",
];

/** Half the clients ingest, a quarter read history pages, a quarter stats; each kind shares one rotation. */
function clientsFor(connections: number, ingest: Workload, history: Workload, stats: Workload): Workload[] {
  return Array.from({ length: connections }, (_, i) => [ingest, ingest, history, stats][i % 4] as Workload);
}

/** The log events of LOG_EVENTS the server wrote, by name, and how long its health check saw PostgreSQL away. */
function logEvents(path: string): { counts: Record<string, number>; downSeconds: number[] } {
  const counts: Record<string, number> = {};
  const downSeconds: number[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!LOG_EVENTS.some((event) => line.includes(`"${event}"`))) continue;
    try {
      const entry = JSON.parse(line) as { event?: string; downSeconds?: number };
      if (!entry.event || !LOG_EVENTS.includes(entry.event)) continue;
      counts[entry.event] = (counts[entry.event] ?? 0) + 1;
      if (typeof entry.downSeconds === "number") downSeconds.push(entry.downSeconds);
    } catch {
      // A line that is not JSON (a crash report) is not an event.
    }
  }
  return { counts, downSeconds };
}

async function answersLivez(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${baseUrl}/livez`, { signal: AbortSignal.timeout(5_000) })).status === 200;
  } catch {
    return false;
  }
}

/**
 * rollcall under ingest and reads on a private cluster, which is restarted (`pg_ctl restart -m fast`)
 * at --restart-at: every request is recorded, and the run is told second by second. Returns the exit
 * status; the cluster and the server are gone when it returns or throws.
 */
export async function restart(run: RestartRun): Promise<number> {
  const { options, log } = run;
  const startedAt = new Date().toISOString();
  const target = await openPrivateTarget(options, run.prepare, log);
  const interrupt = () => {
    log("interrupted: stopping the server and the cluster; no report");
    void target.close().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  try {
    const { store, key, server } = target;
    const sample = await readCatalogSample(store, SAMPLE_EVENTS, options.seed);
    log(`generating ${options.batches} media batches for ${options.users} users`);
    const plan = generateTraffic(sample, run.settings, {
      ...DEFAULT_TRAFFIC,
      seed: options.seed,
      users: options.users,
      batches: options.batches,
      batchSize: options.batchSize,
    });
    const userIds = await createUsers(server.baseUrl, key, plan.users);
    const readers = (await keptUsers(store, target.partnerId)).map((user) => user.id);
    if (readers.length === 0) throw new Error("restart reads the kept users: pass --kept-items N > 0");
    const clients = () =>
      clientsFor(
        options.connections[0] ?? 16,
        ingestWorkload(userIds, plan.batches),
        historyWorkload(readers),
        statsWorkload(readers),
      );
    const loops = (seconds: number) =>
      startLoops({
        baseUrl: server.baseUrl,
        key,
        clients: clients(),
        durationMs: seconds * 1000,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
      });
    if (options.warmupSeconds > 0) {
      log(`warming up for ${options.warmupSeconds} s`);
      await loops(options.warmupSeconds).done;
      await forgetMedia(store, userIds);
    }
    const machine = await describeMachine(store.client);
    const catalog = await catalogCounts(store);
    // From here on rollcall's pools are the only clients of the cluster.
    await target.closeStore();
    const restartAt = options.restartAtSeconds ?? 1;
    log(`measuring for ${options.durationSeconds} s; PostgreSQL restarts at ${restartAt} s`);
    const measured = loops(options.durationSeconds);
    await Bun.sleep(Math.max(0, measured.startedAt + restartAt * 1000 - performance.now()));
    const restartMs = performance.now() - measured.startedAt;
    await target.cluster.restart("fast").catch(async (error) => {
      await measured.done;
      throw error;
    });
    const backMs = performance.now() - measured.startedAt;
    log(`PostgreSQL restarted in ${Math.round(backMs - restartMs)} ms`);
    const samples = await measured.done;
    const stayedUp = isRunning(server.pid) && (await answersLivez(server.baseUrl));
    const findings = restartFindings(samples, options.durationSeconds, {
      restartMs,
      backMs,
      recoveredMs: null,
    });
    const problems = restartProblems(findings, stayedUp);
    const serverLog = logEvents(server.logPath);
    const report = {
      scenario: "restart",
      startedAt,
      command: `bun run load -- ${run.argv.join(" ")}`,
      machine,
      setup: {
        catalog,
        keptItems: options.keptItems,
        users: options.users,
        batches: options.batches,
        batchSize: options.batchSize,
        connections: options.connections[0],
        clients: "half ingest, a quarter history pages with media, a quarter stats",
        durationSeconds: options.durationSeconds,
        restartAtSeconds: restartAt,
        server: { shards: options.shards[0], workers: options.workers[0], env: options.serverEnv },
        postgres: "private cluster (initdb defaults, fsync off), pg_ctl restart -m fast",
      },
      processStayedUp: stayedUp,
      serverPid: server.pid,
      serverLog,
      findings,
      problems,
    };
    console.log(`\nrestart on ${machine.cpu} (${machine.cores} cores, load average ${machine.loadAverage})`);
    for (const line of findingsLines(findings, stayedUp)) console.log(line);
    console.log(`server log events: ${JSON.stringify(serverLog.counts)}`);
    for (const problem of problems) console.log(`PROBLEM ${problem}`);
    const title = {
      text: `rollcall through a PostgreSQL restart, ${options.connections[0]} connections`,
      subtitle:
        `${findings.secondsWith5xx} s with 5xx; every route 200 again ` +
        `${findings.recoveryMs === null ? "not within the run" : `${findings.recoveryMs} ms after the restart`}; ` +
        `process ${stayedUp ? "stayed up" : "DID NOT stay up"}; ${machine.cpu}, ${machine.cores} cores`,
    };
    const base = resultBase("restart", startedAt, RESULTS_DIR);
    writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(`${base}.svg`, await restartChart(title, findings.seconds, findings.marks));
    console.log(`wrote ${base}.json\nwrote ${base}.svg`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    process.off("SIGINT", interrupt);
    await target.close();
  }
}
