import { MatchEngineError, type WorkerFault } from "./faults.ts";
import type { IndexBuffers } from "./layout.ts";
import type { Candidate, MatchQuery, MatchSettings } from "./matcher.ts";
import { MatchPool, type PoolOptions } from "./pool.ts";
import { IndexReader } from "./search.ts";

export type GenerationOptions = { settings: MatchSettings; shards: number; pool: PoolOptions };

/** One built index and the threads that read it. */
export class Generation {
  readonly number: number;
  /** Batches started on this generation and not yet answered. */
  batches = 0;
  private readonly reader: IndexReader;
  private readonly pool: MatchPool | null;

  constructor(
    /** The shared buffers: request threads match on the same ones (threadIndex.ts). */
    readonly index: IndexBuffers,
    readonly version: string,
    options: GenerationOptions,
  ) {
    this.number = index.generation;
    this.reader = new IndexReader(index);
    this.pool = options.pool.workers > 0 ? new MatchPool(index, this.reader, options.pool) : null;
  }

  /** Resolves when the generation can answer without waiting for threads to start. */
  async ready(): Promise<void> {
    await this.pool?.ready();
  }

  async match(queries: readonly MatchQuery[]): Promise<(Candidate | null)[]> {
    return this.candidates(this.pool === null ? this.matchInline(queries) : await this.pool.match(queries));
  }

  injectFault(fault: WorkerFault, tasks: number): void {
    if (this.pool === null) throw new MatchEngineError("fault injection needs worker threads (WORKERS > 0)");
    this.pool.injectFault(fault, tasks);
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  private matchInline(queries: readonly MatchQuery[]): Int32Array {
    const captures = new Float64Array(queries.length * 3);
    queries.forEach((query, i) => {
      captures[i * 3] = query.latitude;
      captures[i * 3 + 1] = query.longitude;
      captures[i * 3 + 2] = query.takenAtMs;
    });
    const out = new Int32Array(queries.length * 2);
    this.reader.matchPacked(captures, queries.length, out);
    return out;
  }

  private candidates(rows: Int32Array): (Candidate | null)[] {
    const { eventId, eventLicensed, venueId } = this.reader.arrays;
    const answers: (Candidate | null)[] = new Array(rows.length / 2);
    for (let i = 0; i < answers.length; i++) {
      const row = rows[i * 2] ?? -1;
      answers[i] =
        row < 0
          ? null
          : {
              eventId: eventId[row] ?? 0,
              venueId: venueId[rows[i * 2 + 1] ?? 0] ?? 0,
              licensed: ((eventLicensed[row >>> 5] ?? 0) & (1 << (row & 31))) !== 0,
            };
    }
    return answers;
  }
}
