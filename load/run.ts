import { SingleBar } from "cli-progress";
import { sql } from "drizzle-orm";
import { ConfigError, isInteractive, loadConfig } from "../src/config.ts";
import type { Store } from "../src/store/db.ts";
import { describeFailure } from "../src/store/failures.ts";
import { parseLoadArgs, type Scenario as ScenarioName, USAGE, UsageError } from "./args.ts";
import { describeMachine } from "./report/machine.ts";
import { printReport, problemsOf, writeReport } from "./report/write.ts";
import type { Scenario, ScenarioContext } from "./scenarios/common.ts";
import { ingest } from "./scenarios/ingest.ts";
import { mixed } from "./scenarios/mixed.ts";
import { history, stats } from "./scenarios/reads.ts";
import { restart } from "./scenarios/restart.ts";
import { sweep } from "./scenarios/sweep.ts";
import { seedKeptItems } from "./seed/keptItems.ts";
import { catalogCounts, openTarget } from "./target/index.ts";
import { keptItemCount, keptUsers } from "./target/users.ts";
import { readCatalogSample } from "./traffic/sample.ts";

/** The scenarios that run against openTarget's server; `restart` brings a PostgreSQL cluster of its own. */
const scenarios: Record<Exclude<ScenarioName, "restart">, Scenario> = {
  ingest,
  history,
  stats,
  mixed,
  sweep,
};

/** Events read from the catalog to draw traffic from: plenty of distinct events, little memory. */
const SAMPLE_EVENTS = 100_000;

const log = (message: string) => console.error(`[load] ${message}`);

/** The data-scale pre-load, skipped when the partner already has its kept users (a rerun). */
async function seedIfWanted(
  store: Store,
  partnerId: string,
  keptItems: number,
  seed: number,
  settings: ScenarioContext["settings"],
) {
  if (keptItems === 0) return;
  const existing = (await keptUsers(store, partnerId)).length;
  if (existing > 0) {
    log(`the partner has ${existing} kept users already: reading theirs, not loading ${keptItems} items`);
    // A database kept from before the seed wrote confidences has history rows without one.
    const [unscored] = await store.rows<{ rows: number }>(
      sql`select count(*)::int as rows from user_events where confidence is null`,
    );
    if ((unscored?.rows ?? 0) > 0) {
      log(`${unscored?.rows} history rows have no confidence: run \`bun run cli confidence backfill\` on it`);
    }
    return;
  }
  if (store.client === null) throw new Error("--kept-items needs PostgreSQL (COPY)");
  const sample = await readCatalogSample(store, SAMPLE_EVENTS, seed);
  log(`loading ${keptItems} kept items with COPY`);
  const bar = isInteractive() ? new SingleBar({ format: "kept items [{bar}] {value}/{total}" }) : null;
  bar?.start(keptItems, 0);
  const started = performance.now();
  const report = await seedKeptItems(store, sample, {
    keptItems,
    partnerId,
    seed,
    settings,
    onProgress: (rows) => bar?.update(rows),
  });
  bar?.stop();
  const seconds = (performance.now() - started) / 1000;
  log(
    `kept ${report.media} items for ${report.users} users at ${report.userEvents} events in ${seconds.toFixed(0)} s`,
  );
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const options = parseLoadArgs(argv, config.databaseUrl);
  if (options === null) {
    console.log(USAGE);
    return 0;
  }
  const settings = config.match;
  const prepare = (store: Store, partnerId: string) =>
    seedIfWanted(store, partnerId, options.keptItems, options.seed, settings);
  const scenario = options.scenario;
  if (scenario === "restart") return restart({ options, argv, settings, prepare, log });
  const startedAt = new Date().toISOString();
  const target = await openTarget(options, prepare, log);
  // Ctrl-C stops the run instead of measuring on against a server the terminal interrupted as well:
  // the server is stopped and a throwaway database dropped, no report is written, and the exit
  // status is the shell's for an interrupt.
  const interrupt = () => {
    log("interrupted: stopping the server and cleaning up; no report");
    void target.close().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  try {
    const sample = await readCatalogSample(target.store, SAMPLE_EVENTS, options.seed);
    const sendsMedia = scenario !== "history" && scenario !== "stats";
    if (sendsMedia) await target.markTouched();
    // Counted before the run: `mixed` adds media to the kept users as it goes.
    const keptItems = await keptItemCount(target.store, target.partnerId);
    const outcome = await scenarios[scenario]({ options, target, sample, settings, log });
    const report = {
      scenario,
      startedAt,
      command: `bun run load -- ${argv.join(" ")}`,
      machine: await describeMachine(target.store.client),
      setup: {
        catalog: await catalogCounts(target.store),
        keptItems,
        ...(sendsMedia
          ? { users: options.users, batches: options.batches, batchSize: options.batchSize }
          : {}),
        durationSeconds: options.durationSeconds,
        server: options.url ?? target.server,
        reusedDatabase: target.reused,
      },
      runs: outcome.runs,
      ratios: outcome.ratios,
      sweep: outcome.sweep,
      problems: problemsOf(outcome.runs, options.expectedStatuses),
    };
    printReport(report);
    for (const path of writeReport(report, outcome.chart)) console.log(`wrote ${path}`);
    return report.problems.length === 0 ? 0 : 1;
  } finally {
    process.off("SIGINT", interrupt);
    await target.close();
  }
}

try {
  process.exitCode = await main(Bun.argv.slice(2));
} catch (error) {
  // A usage mistake is exit 2 with the usage text; anything else that stops a run (a refused key, a
  // server that does not answer, a scenario without its data) is one line and exit 1.
  if (error instanceof UsageError) {
    console.error(`${error.message}\n${USAGE}`);
    process.exitCode = 2;
  } else if (error instanceof ConfigError) {
    console.error(error.message);
    process.exitCode = 2;
  } else {
    // By its cause chain: a failed query's own message is its SQL and a page of bound parameters.
    console.error(`load: ${describeFailure(error).error}`);
    process.exitCode = 1;
  }
}
