import { Piscina } from "piscina";
import { faultControl, MatchEngineError, requestFault, type WorkerFault } from "./faults.ts";
import type { IndexBuffers } from "./layout.ts";
import type { MatchQuery } from "./matcher.ts";
import { type IndexReader, UNREACHABLE } from "./search.ts";
import type { MatchTask, WorkerData } from "./worker.ts";

export type PoolOptions = {
  workers: number;
  /**
   * Fewest captures worth a task of their own. A Piscina round trip costs about 100 µs under Bun and a
   * capture about 1 µs, so a lone 200-item batch goes as one task; see `bun run bench:match`.
   */
  minTaskItems: number;
  /** Most captures in one task, so one huge backlog still spreads over every worker. */
  maxTaskItems: number;
  /** A task still running after this long is presumed hung: its worker is terminated and replaced. */
  taskTimeoutMs: number;
};

type Request = {
  queries: readonly MatchQuery[];
  /** (event row, venue row) per query, -1 for none. */
  out: Int32Array;
  remaining: number;
  failed: boolean;
  resolve(out: Int32Array): void;
  reject(error: Error): void;
};

type Item = { request: Request; position: number };

const workerUrl = new URL("./worker.ts", import.meta.url).href;

/**
 * The worker threads of one index generation. Batches are grouped by shard into a queue; while every
 * worker is busy the queue grows, so under load tasks coalesce many batches (few large tasks), and when
 * the pool is idle a batch goes out at once. Per-task overhead is paid per task, not per batch.
 */
export class MatchPool {
  private readonly piscina: Piscina;
  private readonly faults = faultControl();
  private readonly pending = new Map<number, Item[]>();
  private pendingCount = 0;
  private running = 0;

  constructor(
    index: IndexBuffers,
    private readonly reader: IndexReader,
    private readonly options: PoolOptions,
  ) {
    const workerData: WorkerData = { index, faults: this.faults };
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
      const request: Request = {
        queries,
        out: new Int32Array(queries.length * 2).fill(-1),
        remaining: 0,
        failed: false,
        resolve,
        reject,
      };
      queries.forEach((query, position) => {
        const shard = this.reader.route(query.latitude, query.longitude);
        if (shard === UNREACHABLE) return;
        const queue = this.pending.get(shard);
        if (queue === undefined) this.pending.set(shard, [{ request, position }]);
        else queue.push({ request, position });
        request.remaining++;
        this.pendingCount++;
      });
      if (request.remaining === 0) resolve(request.out);
      else this.pump();
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

  private pump(): void {
    while (this.running < this.options.workers && this.pendingCount > 0) {
      const share = Math.ceil(this.pendingCount / (this.options.workers - this.running));
      const size = Math.min(this.options.maxTaskItems, Math.max(this.options.minTaskItems, share));
      this.running++;
      void this.runTask(this.take(size)).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /** Takes whole shard groups in arrival order, splitting only the last one. */
  private take(size: number): Item[] {
    const items: Item[] = [];
    for (const [shard, queue] of this.pending) {
      const room = size - items.length;
      if (queue.length <= room) {
        items.push(...queue);
        this.pending.delete(shard);
      } else {
        items.push(...queue.splice(0, room));
      }
      if (items.length >= size) break;
    }
    this.pendingCount -= items.length;
    return items.filter((item) => !item.request.failed);
  }

  private async runTask(items: Item[]): Promise<void> {
    if (items.length === 0) return;
    let result: Int32Array;
    try {
      result = await this.attempt(items).catch(() => this.attempt(items));
    } catch (error) {
      const failure = new MatchEngineError("a matching worker failed twice on this batch", { cause: error });
      for (const { request } of items) {
        if (request.failed) continue;
        request.failed = true;
        request.reject(failure);
      }
      return;
    }
    items.forEach(({ request, position }, i) => {
      if (request.failed) return;
      request.out[position * 2] = result[i * 2] ?? -1;
      request.out[position * 2 + 1] = result[i * 2 + 1] ?? -1;
      request.remaining--;
      if (request.remaining === 0) request.resolve(request.out);
    });
  }

  private async attempt(items: Item[]): Promise<Int32Array> {
    const captures = new Float64Array(items.length * 3);
    items.forEach(({ request, position }, i) => {
      const query = request.queries[position];
      if (query === undefined) return;
      captures[i * 3] = query.latitude;
      captures[i * 3 + 1] = query.longitude;
      captures[i * 3 + 2] = query.takenAtMs;
    });
    const task: MatchTask = { captures, count: items.length };
    // Copied, not transferred: 24 bytes a capture cost less to clone than a transfer list to set up.
    return this.piscina.run(task, { signal: AbortSignal.timeout(this.options.taskTimeoutMs) });
  }
}
