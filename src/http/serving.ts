import type { Config } from "../config.ts";
import { createRateLimits, sharedMemoryLimiter } from "../limits/index.ts";
import type { Observed } from "../observability/instance.ts";
import type { Log } from "../observability/log.ts";
import type { MatchingEngine } from "../shards/engine.ts";
import type { Store } from "../store/db.ts";
import { createApp } from "./app.ts";
import { serve } from "./server.ts";
import { startRequestThreads } from "./threads.ts";

/** The API being served, on one thread or several; main.ts only starts and stops it. */
export type Serving = {
  port: number;
  /** In-flight requests finish, then the serving threads close what they opened. */
  stop(): Promise<void>;
  /** Fault tests: ends one request thread abruptly (nothing happens with one thread: it is the process). */
  endOneThread(): void;
};

export type ServingDeps = {
  config: Config;
  store: Store;
  engine: MatchingEngine;
  cursorSecret: string;
  observed: Observed;
  log: Log;
};

/**
 * With REQUEST_THREADS=1 the main thread serves, matching on the engine (inline, or on its worker
 * pool with WORKERS > 0). With more, request threads serve on the one port and match inline on the
 * shared index, and the main thread supervises them (docs/architecture.md §8).
 */
export async function startServing(deps: ServingDeps): Promise<Serving> {
  return deps.config.requestThreads === 1 ? serveOnThisThread(deps) : serveOnRequestThreads(deps);
}

function serveOnThisThread({ config, store, cursorSecret, observed, log }: ServingDeps): Serving {
  const limits = createRateLimits(config, { store, log });
  const { metrics, matcher, readiness } = observed;
  metrics.watchRateLimitStore(() => limits.storeState());
  const app = createApp({ config, store, matcher, limits, cursorSecret, log, metrics });
  let server: ReturnType<typeof serve>;
  try {
    server = serve(app, { host: config.host, port: config.port, log, metrics, readiness });
  } catch (error) {
    void limits.close();
    throw error;
  }
  return {
    port: server.port,
    stop: async () => {
      await server.stop();
      await limits.close();
    },
    endOneThread: () => {},
  };
}

async function serveOnRequestThreads({
  config,
  engine,
  cursorSecret,
  observed,
  log,
}: ServingDeps): Promise<Serving> {
  const memoryLimiter = sharedMemoryLimiter(config);
  const threads = await startRequestThreads({ config, cursorSecret, engine, memoryLimiter, log });
  observed.onDatabaseChange((up) => threads.setDatabaseUp(up));
  observed.onDrain(() => threads.markDraining());
  observed.gatherFrom(() => threads.metrics());
  return {
    port: threads.port,
    stop: async () => {
      await threads.stop();
      await memoryLimiter?.close();
    },
    endOneThread: () => threads.endOne(),
  };
}
