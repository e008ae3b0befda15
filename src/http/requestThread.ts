/**
 * A request thread: the whole HTTP app on the shared port, with its own share of the database
 * connections and caches, matching inline on the index the supervising thread builds and shares
 * (docs/architecture.md §8). Started and stopped by threads.ts; it never polls the catalog or builds.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import type { Config } from "../config.ts";
import { createRateLimits, ThreadWindowLimiter } from "../limits/index.ts";
import { DatabaseWatch } from "../observability/databaseWatch.ts";
import { readinessOf, timed } from "../observability/instance.ts";
import { createLogger } from "../observability/log.ts";
import { Metrics } from "../observability/metrics.ts";
import { logUnawaitedFailures } from "../observability/unawaited.ts";
import { type SharedGeneration, ThreadIndex } from "../shards/threadIndex.ts";
import { openStore } from "../store/db.ts";
import { createApp } from "./app.ts";
import { serve } from "./server.ts";
import {
  CATALOG_EMPTY,
  DATABASE_UP,
  DRAINING,
  type SupervisorMessage,
  type ThreadMessage,
} from "./threadMessages.ts";

export type ThreadInit = {
  config: Config;
  cursorSecret: string;
  thread: number;
  /** This thread's share of the process's connections and cache memory. */
  poolSize: number;
  readPoolSize: number;
  exportPoolSize: number;
  cacheMb: number;
  /** Int32 flags the supervisor writes: the current generation, the database's state, draining. */
  control: SharedArrayBuffer;
  generations: SharedGeneration[];
  /** The supervisor's in-memory rate limiter, or null when budgets are not counted in memory. */
  limiterPort: MessagePort | null;
};

const port = parentPort;
if (port === null) throw new Error("requestThread.ts runs as a worker thread");
const init = workerData as ThreadInit;
const { config } = init;
const logger = createLogger(config.logLevel);
const log = (event: string, fields: Record<string, unknown> = {}) =>
  logger.log(event, { thread: init.thread, ...fields });
const send = (message: ThreadMessage) => port.postMessage(message);
// As on the main thread (main.ts): the thread keeps serving its other requests instead of dropping them.
logUnawaitedFailures(log);

const control = new Int32Array(init.control);
const store = await openStore({
  databaseUrl: config.databaseUrl,
  databaseReadUrl: config.databaseReadUrl,
  databaseReadMaxLagSeconds: config.databaseReadMaxLagSeconds,
  dataDir: config.dataDir,
  poolSize: init.poolSize,
  readPoolSize: init.readPoolSize,
  exportPoolSize: init.exportPoolSize,
  migrate: false,
});
const index = new ThreadIndex(control, config.match, config.shards);
for (const generation of init.generations) index.hold(generation);
const limits = createRateLimits(config, {
  store,
  log,
  memoryLimiter: init.limiterPort === null ? undefined : new ThreadWindowLimiter(init.limiterPort),
});
const metrics = new Metrics({ process: false });
metrics.watchDatabase(
  () => store.pools(),
  () => Atomics.load(control, DATABASE_UP) === 1,
  () => store.topology(),
);
metrics.watchRateLimitStore(() => limits.storeState());
const app = createApp({
  config: { ...config, eventCacheMb: init.cacheMb, exportsPerInstance: init.exportPoolSize },
  store,
  matcher: timed(index, metrics),
  limits,
  cursorSecret: init.cursorSecret,
  log,
  metrics,
});
// This thread's own pools: the supervisor's watch cannot see them run dry (docs/operations.md, readiness).
const connections = new DatabaseWatch((timeoutMs) => store.ping(timeoutMs), log);
connections.start();
const server = serve(app, {
  port: config.port,
  host: config.host,
  log,
  metrics,
  reusePort: true,
  readiness: () =>
    readinessOf({
      draining: Atomics.load(control, DRAINING) === 1,
      databaseUp: Atomics.load(control, DATABASE_UP) === 1 && connections.up(),
      catalogEmpty: Atomics.load(control, CATALOG_EMPTY) === 1,
      topology: store.topology(),
    }),
});
send({ type: "listening", port: server.port });

port.on("message", (message: SupervisorMessage) => {
  switch (message.type) {
    case "generation":
      index.hold(message.generation);
      send({ type: "held", number: message.generation.number });
      return;
    case "metrics":
      void metrics.snapshot().then((snapshot) => send({ type: "metrics", id: message.id, snapshot }));
      return;
    case "drain":
      void drain();
      return;
  }
});

/** In-flight requests finish, then what they used closes; the supervisor ends the thread after. */
async function drain(): Promise<void> {
  await server.stop();
  connections.stop();
  await limits.close();
  await index.close();
  await store.close();
  await logger.flush();
  send({ type: "stopped" });
}
