import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from "prom-client";
import { type CacheReading, cacheMetrics } from "./cacheMetrics.ts";
import { registerProcessMetrics } from "./processMetrics.ts";
import { type ReadTopology, replicationGauges } from "./replicationMetrics.ts";

/** One registry's figures in prom-client's JSON form, the shape threads exchange. */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** A pool's use as the store counts it (see store/poolUse.ts `PoolUse`). */
export type PoolReading = {
  pool: string;
  connections: number;
  busy: number;
  waits: number;
  waitSeconds: number;
};

export type CatalogReading = {
  generation: number;
  events: number;
  venues: number;
  buildSeconds: number;
  liveSinceMs: number;
};

export type RateLimitStoreReading = { store: "memory" | "redis"; degraded: boolean };

/** What a media batch came to, for the item counters. */
export type BatchReading = {
  accepted: number;
  matched: number;
  rejected: readonly { reason: string }[];
};

/**
 * Latency buckets in seconds: fine over the milliseconds a healthy request takes (docs/performance.md §2);
 * the top buckets separate a slow database from the 8 s request deadline.
 */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 8];
const MATCHING_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/** Methods the API serves; anything else is one label value, so a client cannot mint new series. */
const KNOWN_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

/**
 * The service's Prometheus metrics (docs/operations.md, Observability). Labels are route patterns,
 * methods, statuses, budgets, pools and caches: never a user id, a key or an email, so the number of
 * series is fixed by the code, not by traffic. Counters and histograms are updated where things happen;
 * the state of the index, the pools, the limiter and the caches is read when Prometheus scrapes.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Counter<"route" | "method" | "status">;
  readonly #latency: Histogram<"route" | "method">;
  readonly #rateLimited: Counter<"budget">;
  readonly #items: Counter<"outcome" | "reason">;
  readonly #matching: Histogram;
  #catalog: () => CatalogReading | null = () => null;
  #pools: () => readonly PoolReading[] = () => [];
  #databaseUp: () => boolean | null = () => null;
  #topology: ReadTopology = () => null;
  #oldestTransaction: () => Promise<number | null> = async () => null;
  #rateLimitStore: () => RateLimitStoreReading | null = () => null;
  readonly #caches = new Map<string, () => CacheReading>();

  /**
   * `process`: whether this registry also reports the process's CPU, memory, event loop and build. Request
   * threads leave it to the supervising thread: their registries are summed into its exposition, and
   * the process's figures would be counted once per thread.
   */
  constructor({ process = true }: { process?: boolean } = {}) {
    const registers = [this.registry];
    if (process) registerProcessMetrics(this.registry);
    this.#requests = new Counter({
      name: "rollcall_http_requests_total",
      help: "Requests answered, by route pattern, method and status.",
      labelNames: ["route", "method", "status"],
      registers,
    });
    this.#latency = new Histogram({
      name: "rollcall_http_request_duration_seconds",
      help: "Time from receiving a request to its answer, by route pattern and method.",
      labelNames: ["route", "method"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#rateLimited = new Counter({
      name: "rollcall_rate_limited_total",
      help: "Requests refused 429 because a key's budget was spent, by budget.",
      labelNames: ["budget"],
      registers,
    });
    this.#items = new Counter({
      name: "rollcall_media_items_total",
      help: "Media items of answered batches: accepted, matched (a subset of accepted), rejected by reason.",
      labelNames: ["outcome", "reason"],
      registers,
    });
    this.#matching = new Histogram({
      name: "rollcall_matching_duration_seconds",
      help: "Time to match one batch's accepted items against the event index.",
      buckets: MATCHING_BUCKETS,
      registers,
    });
    this.#pullGauges(registers);
  }

  request(route: string, method: string, status: number, seconds: number): void {
    const verb = KNOWN_METHODS.has(method) ? method : "OTHER";
    this.#requests.inc({ route, method: verb, status: String(status) });
    this.#latency.observe({ route, method: verb }, seconds);
  }

  rateLimited(budget: string): void {
    this.#rateLimited.inc({ budget });
  }

  batch({ accepted, matched, rejected }: BatchReading): void {
    this.#items.inc({ outcome: "accepted", reason: "" }, accepted);
    this.#items.inc({ outcome: "matched", reason: "" }, matched);
    for (const { reason } of rejected) this.#items.inc({ outcome: "rejected", reason });
  }

  matching(seconds: number): void {
    this.#matching.observe(seconds);
  }

  watchCatalog(read: () => CatalogReading): void {
    this.#catalog = read;
  }

  watchDatabase(pools: () => readonly PoolReading[], up: () => boolean, topology: ReadTopology): void {
    this.#pools = pools;
    this.#databaseUp = up;
    this.#topology = topology;
  }

  /** Reads the age of the service's oldest open transaction at each scrape (the supervising thread's). */
  watchTransactions(oldest: () => Promise<number | null>): void {
    this.#oldestTransaction = oldest;
  }

  watchRateLimitStore(read: () => RateLimitStoreReading): void {
    this.#rateLimitStore = read;
  }

  watchCache(name: string, read: () => CacheReading): void {
    this.#caches.set(name, read);
  }

  /**
   * The exposition text and its content type, for the metrics listener: this registry's figures, plus
   * those `others` gathers (the request threads' registries), summed metric by metric.
   */
  async exposition(others?: () => Promise<MetricsJson[]>): Promise<{ body: string; contentType: string }> {
    if (others === undefined)
      return { body: await this.registry.metrics(), contentType: this.registry.contentType };
    const all = [await this.registry.getMetricsAsJSON(), ...(await others())];
    const merged = AggregatorRegistry.aggregate(all);
    return { body: await merged.metrics(), contentType: merged.contentType };
  }

  /** This registry's figures as a request thread hands them to the supervising thread. */
  snapshot(): Promise<MetricsJson> {
    return this.registry.getMetricsAsJSON();
  }

  #pullGauges(registers: Registry[]): void {
    const catalog = () => this.#catalog();
    const catalogGauge = (name: string, help: string, pick: (reading: CatalogReading) => number) =>
      new Gauge({
        name,
        help,
        registers,
        aggregator: "max",
        collect() {
          const reading = catalog();
          if (reading !== null) this.set(pick(reading));
        },
      });
    catalogGauge(
      "rollcall_catalog_generation",
      "Index generation new batches match on.",
      (r) => r.generation,
    );
    catalogGauge("rollcall_catalog_events", "Events in the index generation being served.", (r) => r.events);
    catalogGauge("rollcall_catalog_venues", "Venues in the index generation being served.", (r) => r.venues);
    catalogGauge(
      "rollcall_catalog_build_seconds",
      "How long the generation being served took from reading the catalog to serving.",
      (r) => r.buildSeconds,
    );
    catalogGauge(
      "rollcall_catalog_live_since_seconds",
      "When the generation being served went live (Unix time).",
      (r) => r.liveSinceMs / 1000,
    );
    this.#databaseGauges(registers);
    const rateLimitStore = () => this.#rateLimitStore();
    new Gauge({
      name: "rollcall_rate_limit_store_degraded",
      help: "1 while the shared (Redis) rate-limit store is unreachable and budgets are counted per instance.",
      labelNames: ["store"],
      registers,
      aggregator: "max",
      collect() {
        const reading = rateLimitStore();
        if (reading !== null) this.set({ store: reading.store }, reading.degraded ? 1 : 0);
      },
    });
    cacheMetrics(registers, () => this.#caches);
  }

  #databaseGauges(registers: Registry[]): void {
    const pools = () => this.#pools();
    const up = () => this.#databaseUp();
    const perPool = (name: string, help: string, pick: (reading: PoolReading) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["pool"],
        registers,
        collect() {
          for (const reading of pools()) this.set({ pool: reading.pool }, pick(reading));
        },
      });
    perPool("rollcall_db_pool_connections", "Connections a pool may open.", (r) => r.connections);
    perPool(
      "rollcall_db_pool_busy",
      "Statements sent and not yet answered, plus connections held for a batch's transaction.",
      (r) => r.busy,
    );
    const perPoolCount = (name: string, help: string, pick: (reading: PoolReading) => number) =>
      new Counter({
        name,
        help,
        labelNames: ["pool"],
        registers,
        collect() {
          this.reset();
          for (const reading of pools()) this.inc({ pool: reading.pool }, pick(reading));
        },
      });
    perPoolCount("rollcall_db_pool_waits_total", "Connections taken by batches and exports.", (r) => r.waits);
    perPoolCount(
      "rollcall_db_pool_wait_seconds_total",
      "Time batches and exports waited for a connection.",
      (r) => r.waitSeconds,
    );
    const oldest = () => this.#oldestTransaction();
    new Gauge({
      name: "rollcall_db_oldest_transaction_seconds",
      help: "Age of the oldest transaction any instance of the service has open in the database; an old one has leaked.",
      registers,
      aggregator: "max",
      async collect() {
        const seconds = await oldest().catch(() => null);
        if (seconds !== null) this.set(seconds);
      },
    });
    replicationGauges(registers, () => this.#topology());
    new Gauge({
      name: "rollcall_db_up",
      help: "1 while PostgreSQL answers the service's health check (every second), else 0.",
      registers,
      aggregator: "max",
      collect() {
        const value = up();
        if (value !== null) this.set(value ? 1 : 0);
      },
    });
  }
}
