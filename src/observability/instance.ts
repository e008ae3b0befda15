import type { Config } from "../config.ts";
import type { RateLimits } from "../limits/index.ts";
import type { MatchingEngine } from "../shards/engine.ts";
import type { Matcher } from "../shards/matcher.ts";
import type { Store } from "../store/db.ts";
import { DatabaseWatch } from "./databaseWatch.ts";
import type { Log } from "./log.ts";
import { Metrics } from "./metrics.ts";

/** Whether the instance should get traffic, and if not, why (docs/operations.md, Observability). */
export type Readiness = () => { ready: boolean; reasons: string[] };

type Listening = { port: number; stop(): Promise<void> };

/** Serves the metrics exposition on its own port, so it is never exposed with the API. */
function serveMetrics(metrics: Metrics, options: { port: number; host: string }): Listening {
  const server = Bun.serve({
    port: options.port,
    hostname: options.host,
    routes: {
      "/metrics": async () => {
        const { body, contentType } = await metrics.exposition();
        return new Response(body, { headers: { "content-type": contentType } });
      },
    },
    fetch: () => new Response("Not found: the metrics are at /metrics.\n", { status: 404 }),
  });
  return { port: server.port ?? options.port, stop: () => server.stop() };
}

/** What an operator watches of one running instance: metrics, the database's state, readiness. */
export type Observed = {
  metrics: Metrics;
  /** The engine as the API calls it, each batch's matching timed. */
  matcher: Matcher;
  readiness: Readiness;
  /** From now on /readyz answers 503 "draining": the instance is about to stop. */
  drain(): void;
  /** Where the metrics listener listens, or null when METRICS_PORT is unset. */
  metricsPort: number | null;
  close(): Promise<void>;
};

/** The engine with each batch's matching time recorded. */
function timed(engine: Matcher, metrics: Metrics): Matcher {
  return {
    match: async (queries) => {
      const started = performance.now();
      try {
        return await engine.match(queries);
      } finally {
        metrics.matching((performance.now() - started) / 1000);
      }
    },
    close: () => engine.close(),
  };
}

/**
 * Wires the metrics to what they read, starts the database watch and, when METRICS_PORT is set, the
 * metrics listener. Ready means: the index is built (it is before the server listens), the database
 * answers, and the instance is not draining.
 */
export function observe(
  config: Config,
  parts: { store: Store; engine: MatchingEngine; limits: RateLimits; log: Log },
): Observed {
  const { store, engine, limits, log } = parts;
  const metrics = new Metrics();
  const database = new DatabaseWatch((timeoutMs) => store.ping(timeoutMs), log);
  database.start();
  metrics.watchCatalog(() => engine.catalog());
  metrics.watchDatabase(
    () => store.pools(),
    () => database.up(),
  );
  metrics.watchRateLimitStore(() => limits.storeState());
  let listener: Listening | null = null;
  if (config.metricsPort !== null) {
    listener = serveMetrics(metrics, { port: config.metricsPort, host: config.metricsHost });
  }
  let draining = false;
  return {
    metrics,
    matcher: timed(engine, metrics),
    readiness: () => {
      const reasons = [...(draining ? ["draining"] : []), ...(database.up() ? [] : ["database_unavailable"])];
      return { ready: reasons.length === 0, reasons };
    },
    drain: () => {
      draining = true;
    },
    metricsPort: listener?.port ?? null,
    close: async () => {
      database.stop();
      await listener?.stop();
    },
  };
}
