import { Piscina } from "piscina";
import { faultControl, MatchEngineError, requestFault, type WorkerFault } from "./faults.ts";
import type { IndexBuffers } from "./layout.ts";
import type { MatchQuery } from "./matcher.ts";
import { outOfRange } from "./outOfRange.ts";
import { type IndexReader, UNREACHABLE } from "./search.ts";
import type { MatchTask, WorkerData } from "./worker.ts";

export type PoolOptions = {
  workers: number;
  /**
   * Fewest captures worth a task of their own. A Piscina round trip under Bun costs as much as matching
   * many captures, so a lone 200-item batch goes as one task (`bun run bench:match`, docs/performance.md §3).
   */
  minTaskItems: number;
  /** Most captures in one task, so one huge backlog still spreads over every worker. */
  maxTaskItems: number;
  /** A task still running after this long is presumed hung: its worker is terminated and replaced. */
  taskTimeoutMs: number;
};

type Request = {
  /** (event row, venue row) per query, -1 for none. */
  out: Int32Array;
  /** Captures of this batch not yet answered by a task. */
  remaining: number;
  failed: boolean;
  resolve(out: Int32Array): void;
  reject(error: Error): void;
};

/**
 * The captures of one batch that some venue can reach, sorted by shard: (latitude, longitude,
 * takenAtMs) triples and, for each, its position in the batch. Typed arrays rather than an object per
 * capture, so queueing a batch allocates three arrays whatever its size.
 */
type Segment = { request: Request; captures: Float64Array; positions: Int32Array; taken: number };

/** The part of a segment one task carries. */
type Part = { segment: Segment; first: number; count: number };

const workerUrl = new URL("./worker.ts", import.meta.url).href;

/**
 * The worker threads of one index generation. Batches are grouped by shard into a queue; while every
 * worker is busy the queue grows, so under load tasks coalesce many batches (few large tasks), and when
 * the pool is idle a batch goes out at once. Per-task overhead is paid per task, not per batch.
 */
export class MatchPool {
  private readonly piscina: Piscina;
  private readonly faults = faultControl();
  private readonly pending: Segment[] = [];
  private pendingCount = 0;
  private running = 0;
  private pumpScheduled = false;
  /** Scratch for grouping a batch by shard: each capture's shard, then each shard's next free place. */
  private shardOf = new Int32Array(256);
  private readonly shardNext: Int32Array;

  constructor(
    index: IndexBuffers,
    private readonly reader: IndexReader,
    private readonly options: PoolOptions,
  ) {
    const workerData: WorkerData = { index, faults: this.faults };
    this.shardNext = new Int32Array(index.shards + 1);
    this.piscina = new Piscina({
      filename: workerUrl,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData,
    });
  }

  match(queries: readonly MatchQuery[]): Promise<Int32Array> {
    return new Promise((resolve, reject) => {
      const out = new Int32Array(queries.length * 2).fill(-1);
      const request: Request = { out, remaining: 0, failed: false, resolve, reject };
      const segment = this.groupByShard(request, queries);
      if (segment === null) return resolve(out);
      this.pending.push(segment);
      this.pendingCount += request.remaining;
      this.schedulePump();
    });
  }

  /**
   * Resolves once every thread has loaded the worker and mapped the index (one empty task each), so a
   * new generation is swapped in warm, and a worker that cannot start stops the swap instead.
   */
  async ready(): Promise<void> {
    const empty: MatchTask = { captures: new Float64Array(0), count: 0 };
    await Promise.all(Array.from({ length: this.options.workers }, () => this.piscina.run(empty)));
  }

  injectFault(fault: WorkerFault, tasks: number): void {
    requestFault(this.faults, fault, tasks);
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }

  /** A counting sort by shard; captures no venue reaches are left out (their answer stays -1). */
  private groupByShard(request: Request, queries: readonly MatchQuery[]): Segment | null {
    if (this.shardOf.length < queries.length) this.shardOf = new Int32Array(queries.length);
    const { shardOf, shardNext } = this;
    shardNext.fill(0);
    let reachable = 0;
    for (let i = 0; i < queries.length; i++) {
      const query = queries[i] as MatchQuery;
      const shard = this.reader.route(query.latitude, query.longitude);
      shardOf[i] = shard;
      if (shard === UNREACHABLE) continue;
      shardNext[shard + 1] = (shardNext[shard + 1] ?? outOfRange(shardNext, shard + 1, "shardNext")) + 1;
      reachable++;
    }
    if (reachable === 0) return null;
    for (let shard = 1; shard < shardNext.length; shard++)
      shardNext[shard] =
        (shardNext[shard] ?? outOfRange(shardNext, shard, "shardNext")) +
        (shardNext[shard - 1] ?? outOfRange(shardNext, shard - 1, "shardNext"));
    const captures = new Float64Array(reachable * 3);
    const positions = new Int32Array(reachable);
    for (let i = 0; i < queries.length; i++) {
      const shard = shardOf[i] ?? outOfRange(shardOf, i, "shardOf");
      if (shard === UNREACHABLE) continue;
      const query = queries[i] as MatchQuery;
      const place = shardNext[shard] ?? outOfRange(shardNext, shard, "shardNext");
      shardNext[shard] = place + 1;
      captures[place * 3] = query.latitude;
      captures[place * 3 + 1] = query.longitude;
      captures[place * 3 + 2] = query.takenAtMs;
      positions[place] = i;
    }
    request.remaining = reachable;
    return { request, captures, positions, taken: 0 };
  }

  /**
   * Dispatches on the next turn of the event loop rather than at once, so the batches that arrive
   * together (every request answered by one finished task comes straight back with its next batch)
   * leave as one task instead of one small task each.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.options.workers && this.pendingCount > 0) {
      const share = Math.ceil(this.pendingCount / (this.options.workers - this.running));
      const size = Math.min(this.options.maxTaskItems, Math.max(this.options.minTaskItems, share));
      this.running++;
      void this.runTask(this.take(size)).finally(() => {
        this.running--;
        this.schedulePump();
      });
    }
  }

  /** Takes whole segments in arrival order, splitting only the last one. */
  private take(size: number): Part[] {
    const parts: Part[] = [];
    let items = 0;
    while (items < size) {
      const segment = this.pending[0];
      if (segment === undefined) break;
      const count = Math.min(segment.positions.length - segment.taken, size - items);
      if (!segment.request.failed) parts.push({ segment, first: segment.taken, count });
      segment.taken += count;
      items += count;
      this.pendingCount -= count;
      if (segment.taken === segment.positions.length) this.pending.shift();
    }
    return parts;
  }

  private async runTask(parts: Part[]): Promise<void> {
    if (parts.length === 0) return;
    let result: Int32Array;
    try {
      const task = packTask(parts);
      result = await this.attempt(task).catch(() => this.attempt(task));
    } catch (error) {
      const failure = new MatchEngineError("a matching worker failed twice on this batch", { cause: error });
      for (const { segment } of parts) {
        if (segment.request.failed) continue;
        segment.request.failed = true;
        segment.request.reject(failure);
      }
      return;
    }
    let offset = 0;
    for (const { segment, first, count } of parts) {
      const { request, positions } = segment;
      if (!request.failed) {
        for (let i = 0; i < count; i++) {
          const position = positions[first + i] ?? outOfRange(positions, first + i, "positions");
          request.out[position * 2] =
            result[(offset + i) * 2] ?? outOfRange(result, (offset + i) * 2, "result");
          request.out[position * 2 + 1] =
            result[(offset + i) * 2 + 1] ?? outOfRange(result, (offset + i) * 2 + 1, "result");
        }
        request.remaining -= count;
        if (request.remaining === 0) request.resolve(request.out);
      }
      offset += count;
    }
  }

  private attempt(task: MatchTask): Promise<Int32Array> {
    // Copied, not transferred: 24 bytes a capture cost less to clone than a transfer list to set up.
    return this.piscina.run(task, { signal: AbortSignal.timeout(this.options.taskTimeoutMs) });
  }
}

/** One task's captures in one array: a segment taken whole is sent as it is. */
function packTask(parts: readonly Part[]): MatchTask {
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && only.count === only.segment.positions.length)
    return { captures: only.segment.captures, count: only.count };
  let count = 0;
  for (const part of parts) count += part.count;
  const captures = new Float64Array(count * 3);
  let offset = 0;
  for (const { segment, first, count: n } of parts) {
    captures.set(segment.captures.subarray(first * 3, (first + n) * 3), offset * 3);
    offset += n;
  }
  return { captures, count };
}
