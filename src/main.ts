import { lookup } from "node:dns/promises";
import { createServer } from "node:net";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { startCorrections } from "./flows/corrections/correctionRunner.ts";
import { type Serving, startServing } from "./http/serving.ts";
import { SUPERVISOR_CONNECTIONS } from "./http/threads.ts";
import { buildInfo } from "./observability/build.ts";
import { CatalogMetrics } from "./observability/catalogMetrics.ts";
import { observe } from "./observability/instance.ts";
import { createLogger, type Logger } from "./observability/log.ts";
import { logUnawaitedFailures } from "./observability/unawaited.ts";
import type { MatchingEngine } from "./shards/engine.ts";
import { startMatchingEngine } from "./shards/pollingEngine.ts";
import { storeCatalogSource } from "./shards/source.ts";
import { readCatalogProgress } from "./store/catalog/catalogHealth.ts";
import { EmbeddedDatabaseBusyError, openStore } from "./store/db.ts";
import { bootstrapDemo } from "./store/demo.ts";
import { describeFailure } from "./store/failures.ts";
import { cursorSecretOf } from "./store/settings.ts";

/**
 * How long a shutdown may take: in-flight requests end within their deadline (8 s), then the database
 * pools close within theirs (5 s).
 */
export const SHUTDOWN_GRACE_MS = 15_000;

/** A failure to listen, named by address, with the system's code for `startFailure` to show. */
function cannotListen({ host, port }: Pick<Config, "host" | "port">, reason: string, code: unknown): Error {
  return Object.assign(new Error(`cannot listen on ${host}:${port}: ${reason}`), { code });
}

/**
 * Fails unless HOST resolves to an address, before anything starts: the runtime reports a host it
 * cannot resolve (`not-a-host.invalid`, `999.1.1.1`) as a port in use, which sends an operator after
 * a port clash that does not exist.
 */
async function checkHost({ host, port }: Config): Promise<void> {
  try {
    await lookup(host);
  } catch (error) {
    const { code } = error as { code?: unknown };
    throw cannotListen(
      { host, port },
      "HOST resolves to no address",
      typeof code === "string" ? code : "ENOTFOUND",
    );
  }
}

/**
 * Fails unless the port can be had, before anything starts: a fresh embedded database would otherwise
 * load the demo catalog and print its one-time key, with a "try it" line naming the other process's
 * port, and only then find the port taken. Binding can still race another process; `listen` names that.
 */
async function checkPort({ host, port }: Config): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: Error & { code?: unknown }) => {
      reject(cannotListen({ host, port }, error.message, error.code));
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * Opens the store, applying pending migrations and logging each by name; an embedded database that
 * cannot be opened is named with its directory.
 */
async function openConfiguredStore(config: Config, log: Logger["log"]) {
  try {
    const threaded = config.requestThreads > 1;
    // With request threads, the main thread only polls the catalog and checks the database: the
    // connections go to the threads (threads.ts), so the configured totals hold for the process.
    return await openStore({
      ...config,
      poolSize: threaded ? SUPERVISOR_CONNECTIONS : config.databasePoolSize,
      readPoolSize: threaded ? 1 : config.databaseReadPoolSize,
      exportPoolSize: threaded ? 1 : config.exportsPerInstance,
      onMigration: (name) => log("migration_applied", { migration: name }),
    });
  } catch (error) {
    if (config.databaseUrl !== null || error instanceof EmbeddedDatabaseBusyError) throw error;
    throw new StartError(
      `the embedded database in DATA_DIR=${config.dataDir} could not be opened (${describeFailure(error).error}): ` +
        "the directory must be writable and hold nothing but a database this service created",
    );
  }
}

/** A failure to start that its message explains in full. */
class StartError extends Error {}

/** The service's base address as a client writes it: an IPv6 host goes in brackets. */
const baseUrlOf = (host: string, port: number) =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`;

/** A failure to serve, naming the address when the system refused it (taken, or not this machine's). */
function cannotListenAs({ host, port }: Config, error: unknown): Error {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return cannotListen({ host, port }, String(message), code);
}

/** What a started service is made of, for a test entry that drills its faults (faultDrillService.ts). */
export type RunningService = {
  readonly config: Config;
  readonly engine: MatchingEngine;
  readonly serving: Serving;
};

async function start(config: Config, logger: Logger): Promise<RunningService> {
  const { log } = logger;
  await checkHost(config);
  await checkPort(config);
  const store = await openConfiguredStore(config, log);
  if (config.demo) {
    await bootstrapDemo(store, (line) => console.log(line), {
      baseUrl: baseUrlOf(config.host, config.port),
      environment: config.environment,
    });
  }
  const engine = await startMatchingEngine({
    store,
    settings: config.match,
    shards: config.shards,
    // Request threads match inline on the shared index; the pool serves a single serving thread.
    workers: config.requestThreads === 1 ? config.workers : 0,
    pollSeconds: config.catalogPollSeconds,
    log,
  });
  const cursorSecret = await cursorSecretOf(store, config.cursorSecret);
  const observed = observe(config, { store, engine, log });
  const catalogMetrics = new CatalogMetrics(observed.metrics.registry);
  catalogMetrics.watchHealth(() => readCatalogProgress(store));
  // Kept items follow the catalog's corrections once this instance's index holds them (contract §15).
  const corrections = startCorrections(
    {
      store,
      matcher: engine,
      indexVersion: () => Number(engine.catalog().version),
      catalog: storeCatalogSource(store),
      settings: config.match,
      log,
      onReplaced: (replacement) => catalogMetrics.replaced(replacement),
    },
    config.catalogPollSeconds,
  );
  let serving: Serving;
  try {
    serving = await startServing({ config, store, engine, cursorSecret, observed, log });
  } catch (error) {
    // Let go of what started, the embedded database's lock included, before the process exits.
    await corrections.close();
    await observed.close();
    await engine.close();
    await store.close();
    throw cannotListenAs(config, error);
  }
  console.log(`rollcall listening on ${baseUrlOf(config.host, serving.port)}`);
  if (observed.metricsPort !== null) {
    console.log(`metrics on http://${config.metricsHost}:${observed.metricsPort}/metrics`);
  }
  log("started", {
    ...buildInfo(),
    port: serving.port,
    environment: config.environment,
    database: store.kind,
    requestThreads: config.requestThreads,
    workers: config.workers,
    shards: config.shards,
    metricsPort: observed.metricsPort,
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log("shutdown", { signal, drainSeconds: config.drainSeconds });
    // A backstop for a database that stopped answering: requests give up after their deadline and
    // the pools after theirs, but nothing may keep an orchestrator waiting for ever.
    setTimeout(
      () => {
        log("shutdown_forced", { afterSeconds: SHUTDOWN_GRACE_MS / 1000 + config.drainSeconds });
        void logger.flush().finally(() => process.exit(1));
      },
      SHUTDOWN_GRACE_MS + config.drainSeconds * 1000,
    ).unref();
    // Not ready first, still serving, so a load balancer stops sending before the listener closes.
    observed.drain();
    await Bun.sleep(config.drainSeconds * 1000);
    // In-flight requests finish before the matcher and the database they use go away.
    await serving.stop();
    await corrections.close();
    await observed.close();
    await engine.close();
    await store.close();
    log("stopped", { signal });
    await logger.flush();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
  return { config, engine, serving };
}

/**
 * Why the service could not start, for an operator. A bad setting, a busy embedded database and a
 * failure the system or PostgreSQL names with a code (the port is taken, the host is not this
 * machine's, the database does not exist) are one line; anything else is a defect and keeps its stack.
 */
function startFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof EmbeddedDatabaseBusyError) return error.message;
  if (error instanceof StartError) return `rollcall could not start: ${error.message}`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") return `rollcall could not start: ${error.message} (${code})`;
    return `rollcall could not start: ${error.stack ?? error.message}`;
  }
  return `rollcall could not start: ${describeFailure(error).error}`;
}

/**
 * Starts the service from the environment, as `bun src/main.ts` does, and resolves once it listens; a
 * failure to start is printed in one line (startFailure) and exits the process with 1.
 */
export async function runService(): Promise<RunningService> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(startFailure(error));
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  // A failure nobody awaited must not take every other request down with the process: it is logged as
  // the defect it is, and the process keeps serving (docs/operations.md, Observability).
  logUnawaitedFailures(logger.log);
  try {
    return await start(config, logger);
  } catch (error) {
    await logger.flush();
    console.error(startFailure(error));
    process.exit(1);
  }
}

// Started only as the entry point, so a test entry can import runService and start it itself.
if (import.meta.main) await runService();
