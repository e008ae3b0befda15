import type { Config } from "../config.ts";
import type { MatchingEngine } from "../shards/engine.ts";
import type { Matcher } from "../shards/matcher.ts";
import { oldestTransactionSeconds } from "../store/activity.ts";
import type { Store } from "../store/db.ts";
import type { Topology } from "../store/store.ts";
import { DatabaseWatch } from "./databaseWatch.ts";
import type { Log } from "./log.ts";
import { Metrics, type MetricsJson } from "./metrics.ts";

/** Which hosts serve writes and reads, as /readyz details them (docs/operations.md §9). */
export type DatabaseDetail = {
  writes: string | null;
  reads: string;
  replication_lag_seconds: number | null;
};

/** Whether the instance should get traffic, and if not, why (docs/operations.md, Observability). */
export type Readiness = () => { ready: boolean; reasons: string[]; database?: DatabaseDetail };

/** /readyz's detail from the store's topology: reads on "primary" when no standby serves them. */
export function databaseDetail(topology: Topology): DatabaseDetail {
  return {
    writes: topology.writes,
    reads: topology.reads ?? "primary",
    replication_lag_seconds: topology.lagSeconds,
  };
}

/**
 * The readiness rule, wherever its inputs are kept (here, or shared memory on request threads). An empty
 * catalog is not ready: every batch would be dropped unmatched (contract §15). The database's topology,
 * when given, is detail: a standby away never makes an instance unready.
 */
export function readinessOf(state: {
  draining: boolean;
  databaseUp: boolean;
  catalogEmpty: boolean;
  topology?: Topology;
}): ReturnType<Readiness> {
  const reasons = [
    ...(state.draining ? ["draining"] : []),
    ...(state.databaseUp ? [] : ["database_unavailable"]),
    ...(state.catalogEmpty ? ["catalog_empty"] : []),
  ];
  return {
    ready: reasons.length === 0,
    reasons,
    ...(state.topology === undefined ? {} : { database: databaseDetail(state.topology) }),
  };
}

type Listening = { port: number; stop(): Promise<void> };

/** Serves the metrics exposition on its own port, so it is never exposed with the API. */
function serveMetrics(
  metrics: Metrics,
  others: () => (() => Promise<MetricsJson[]>) | undefined,
  options: { port: number; host: string },
): Listening {
  const server = Bun.serve({
    port: options.port,
    hostname: options.host,
    routes: {
      "/metrics": async () => {
        const { body, contentType } = await metrics.exposition(others());
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
  /** Also told when the database goes or comes back, and when draining starts (request threads). */
  onDatabaseChange(listener: (up: boolean) => void): void;
  onDrain(listener: () => void): void;
  /** Adds registries kept elsewhere (the request threads') to the exposition. */
  gatherFrom(others: () => Promise<MetricsJson[]>): void;
  /** Where the metrics listener listens, or null when METRICS_PORT is unset. */
  metricsPort: number | null;
  close(): Promise<void>;
};

/** The engine with each batch's matching time recorded. */
export function timed(engine: Matcher, metrics: Metrics): Matcher {
  return {
    match: async (queries) => {
      const started = performance.now();
      try {
        return await engine.match(queries);
      } finally {
        metrics.matching((performance.now() - started) / 1000);
      }
    },
    version: () => engine.version(),
    close: () => engine.close(),
  };
}

/**
 * Wires the metrics to what they read, starts the database watch and, when METRICS_PORT is set, the
 * metrics listener. The rate limiter's state is wired by whoever builds the limiter. Ready means: the index is built (it is before the server listens), the database
 * answers, and the instance is not draining.
 */
export function observe(config: Config, parts: { store: Store; engine: MatchingEngine; log: Log }): Observed {
  const { store, engine, log } = parts;
  const metrics = new Metrics();
  const databaseListeners: ((up: boolean) => void)[] = [];
  const drainListeners: (() => void)[] = [];
  const database = new DatabaseWatch(
    (timeoutMs) => store.ping(timeoutMs),
    log,
    (up) => {
      for (const listener of databaseListeners) listener(up);
    },
  );
  database.start();
  metrics.watchCatalog(() => engine.catalog());
  metrics.watchDatabase(
    () => store.pools(),
    () => database.up(),
    () => store.topology(),
  );
  metrics.watchTransactions(() => oldestTransactionSeconds(store));
  let others: (() => Promise<MetricsJson[]>) | undefined;
  let listener: Listening | null = null;
  if (config.metricsPort !== null) {
    listener = serveMetrics(metrics, () => others, { port: config.metricsPort, host: config.metricsHost });
  }
  let draining = false;
  return {
    metrics,
    matcher: timed(engine, metrics),
    readiness: () =>
      readinessOf({
        draining,
        databaseUp: database.up(),
        catalogEmpty: engine.catalog().events === 0,
        topology: store.topology(),
      }),
    drain: () => {
      draining = true;
      for (const drained of drainListeners) drained();
    },
    onDatabaseChange: (listener) => databaseListeners.push(listener),
    onDrain: (listener) => drainListeners.push(listener),
    gatherFrom: (gather) => {
      others = gather;
    },
    metricsPort: listener?.port ?? null,
    close: async () => {
      database.stop();
      await listener?.stop();
    },
  };
}
