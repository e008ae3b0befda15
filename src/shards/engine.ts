import type { Log } from "../observability/log.ts";
import { describeFailure } from "../store/failures.ts";
import { buildInBackground, buildIndex } from "./build.ts";
import { type CatalogColumns, columnsFromArrays } from "./columns.ts";
import type { WorkerFault } from "./faults.ts";
import { Generation, type GenerationOptions } from "./generation.ts";
import type {
  IndexEvent,
  IndexVenue,
  Matcher,
  MatchQuery,
  MatchSettings,
  PlacedCandidate,
} from "./matcher.ts";
import type { CatalogSource } from "./source.ts";
import type { SharedGeneration } from "./threadIndex.ts";

export { MatchEngineError } from "./faults.ts";

export type EngineOptions = {
  settings: MatchSettings;
  shards: number;
  /** Worker threads; 0 matches on the calling thread. */
  workers: number;
  /** Task sizing and the hang timeout of the pool; defaults suit the API's 200-item batches. */
  pool?: Partial<Omit<GenerationOptions["pool"], "workers">>;
  log?: Log;
};

/** What the index serves now, for metrics and readiness. */
export type CatalogStatus = {
  generation: number;
  /** catalog_state.version the generation was built from. */
  version: string;
  events: number;
  venues: number;
  /** How long the generation took from reading the catalog to serving. */
  buildSeconds: number;
  /** When it went live, epoch milliseconds. */
  liveSinceMs: number;
};

export type MatchingEngine = Matcher & {
  /** Number of the generation new batches run on (1 after the first build). */
  generation(): number;
  /** The generation new batches run on, with its size and build time. */
  catalog(): CatalogStatus;
  /** Checks the catalog version now and, when it moved, builds and swaps in the next generation. */
  refresh(): Promise<void>;
  /** Generations still holding memory: the current one plus any old one with batches in flight. */
  openGenerations(): number;
  /** Drills and tests: the next `tasks` worker tasks throw, exit their thread, or hang. */
  injectWorkerFault(fault: WorkerFault, tasks?: number): void;
  /** The generation new batches run on, as request threads share it. */
  sharedGeneration(): SharedGeneration;
  /**
   * Runs `hook` with each new generation before it serves here: the request threads' supervisor
   * hands it to every thread and switches them over (threadIndex.ts). A hook that fails keeps the
   * previous generation serving, as a failed build does.
   */
  beforeSwap(hook: (next: SharedGeneration) => Promise<void>): void;
};

const DEFAULT_POOL = { minTaskItems: 256, maxTaskItems: 4096, taskTimeoutMs: 5_000 };

/**
 * Matches on the current generation; a refresh builds the next one on a background thread and swaps it
 * in with one assignment. A batch holds the generation it started on until it finishes, and a replaced
 * generation closes its workers (dropping the last references to its buffers) when its last batch ends.
 */
class Engine implements MatchingEngine {
  private current: Generation;
  private status: CatalogStatus;
  private readonly retired = new Set<Generation>();
  private refreshing: Promise<void> | null = null;
  private closed = false;
  private swapHook: (next: SharedGeneration) => Promise<void> = async () => {};

  constructor(
    private readonly source: CatalogSource,
    private readonly options: GenerationOptions,
    first: Generation,
    firstStatus: CatalogStatus,
    private readonly log: Log,
  ) {
    this.current = first;
    this.status = firstStatus;
  }

  version(): string {
    return this.current.version;
  }

  async match(queries: readonly MatchQuery[]): Promise<(PlacedCandidate | null)[]> {
    const generation = this.current;
    generation.batches++;
    try {
      return await generation.match(queries);
    } finally {
      generation.batches--;
      if (generation !== this.current && generation.batches === 0) {
        this.release(generation).catch((error: unknown) =>
          this.log("catalog_generation_close_failed", describeFailure(error)),
        );
      }
    }
  }

  generation(): number {
    return this.current.number;
  }

  catalog(): CatalogStatus {
    return this.status;
  }

  openGenerations(): number {
    return 1 + this.retired.size;
  }

  injectWorkerFault(fault: WorkerFault, tasks = 1): void {
    this.current.injectFault(fault, tasks);
  }

  sharedGeneration(): SharedGeneration {
    return shared(this.current, this.status.events);
  }

  beforeSwap(hook: (next: SharedGeneration) => Promise<void>): void {
    this.swapHook = hook;
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.swapIfChanged().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.refreshing?.catch(() => {});
    await Promise.all([this.current, ...this.retired].map((generation) => generation.close()));
  }

  private async swapIfChanged(): Promise<void> {
    if (this.closed || (await this.source.version()) === this.current.version) return;
    const started = performance.now();
    const { version, columns } = await this.source.load();
    const size = sizeOf(columns);
    const next = await openGeneration(columns, version, this.current.number + 1, this.options);
    if (this.closed) return void (await next.close());
    try {
      await this.swapHook(shared(next, size.events));
    } catch (error) {
      await next.close();
      throw error;
    }
    const previous = this.current;
    this.current = next;
    this.status = statusOf(next, size, started);
    this.retired.add(previous);
    if (previous.batches === 0) await this.release(previous);
    this.log("catalog_generation_live", { ...this.status });
  }

  private async release(generation: Generation): Promise<void> {
    if (!this.retired.delete(generation)) return;
    await generation.close();
  }
}

async function openGeneration(
  columns: CatalogColumns,
  version: string,
  number: number,
  options: GenerationOptions,
): Promise<Generation> {
  const index = await buildInBackground(columns, {
    settings: options.settings,
    shards: options.shards,
    generation: number,
  });
  const generation = new Generation(index, version, options);
  try {
    await generation.ready();
  } catch (error) {
    await generation.close();
    throw error;
  }
  return generation;
}

const shared = (generation: Generation, events: number): SharedGeneration => ({
  number: generation.number,
  version: generation.version,
  events,
  index: generation.index,
});

/** Read before the build, which hands the columns' buffers to its thread. */
const sizeOf = (columns: CatalogColumns) => ({
  events: columns.eventIds.length,
  venues: columns.venueIds.length,
});

function statusOf(
  generation: Generation,
  size: { events: number; venues: number },
  startedMs: number,
): CatalogStatus {
  return {
    generation: generation.number,
    version: generation.version,
    ...size,
    buildSeconds: (performance.now() - startedMs) / 1000,
    liveSinceMs: Date.now(),
  };
}

/** An engine over any catalog source; the first generation is built before it returns. */
export async function createMatchingEngine(
  source: CatalogSource,
  options: EngineOptions,
): Promise<MatchingEngine> {
  const generationOptions: GenerationOptions = {
    settings: options.settings,
    shards: options.shards,
    pool: { ...DEFAULT_POOL, ...options.pool, workers: options.workers },
  };
  const started = performance.now();
  const { version, columns } = await source.load();
  const size = sizeOf(columns);
  const first = await openGeneration(columns, version, 1, generationOptions);
  const log = options.log ?? (() => {});
  const engine = new Engine(source, generationOptions, first, statusOf(first, size, started), log);
  log("catalog_generation_live", { ...engine.catalog() });
  return engine;
}

/**
 * A WORKERS=0 matcher built synchronously on the calling thread from plain arrays: for property tests
 * and benchmarks that build many small catalogs and want no thread start-up per catalog.
 */
export function matcherFromArrays(
  venues: readonly IndexVenue[],
  events: readonly IndexEvent[],
  options: { settings: MatchSettings; shards: number },
): Matcher {
  const index = buildIndex(columnsFromArrays(venues, events), { ...options, generation: 1 });
  const generation = new Generation(index, "1", { ...options, pool: { ...DEFAULT_POOL, workers: 0 } });
  return {
    match: (queries) => generation.match(queries),
    version: () => generation.version,
    close: () => generation.close(),
  };
}
