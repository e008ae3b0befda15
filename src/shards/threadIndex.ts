import { Generation } from "./generation.ts";
import type { IndexBuffers } from "./layout.ts";
import type { Matcher, MatchQuery, MatchSettings, PlacedCandidate } from "./matcher.ts";

/**
 * A request thread's view of the one event index the supervising thread builds. The index's arrays
 * are SharedArrayBuffers: posting a generation to a thread shares them, nothing is copied, so N threads
 * cost one index in memory.
 *
 * Which generation serves is one Int32 in shared memory (`control[CURRENT_GENERATION]`), written by
 * the supervisor only after every thread has acknowledged the new generation: every thread switches
 * at the same store, and none can be asked for a generation it does not hold yet. A batch reads the
 * number once (Atomics.load, so it sees the supervisor's store in order with the buffers it posted
 * before) and matches wholly on that generation; an older generation is dropped once it is neither
 * current nor in use, and its buffers are freed when the last thread lets go of them.
 */
export const CURRENT_GENERATION = 0;

/** A generation as the supervisor posts it to request threads. */
export type SharedGeneration = { number: number; version: string; events: number; index: IndexBuffers };

/** Matching on a request thread runs inline: the thread is itself one of the process's cores at work. */
const INLINE = { workers: 0, minTaskItems: 1, maxTaskItems: 1, taskTimeoutMs: 1 };

export class ThreadIndex implements Matcher {
  private readonly generations = new Map<number, Generation>();

  constructor(
    private readonly control: Int32Array,
    private readonly settings: MatchSettings,
    private readonly shards: number,
  ) {}

  /** Takes a generation the supervisor posted; it serves once the supervisor makes it current. */
  hold({ number, version, index }: SharedGeneration): void {
    const generation = new Generation(index, version, {
      settings: this.settings,
      shards: this.shards,
      pool: INLINE,
    });
    this.generations.set(number, generation);
  }

  async match(queries: readonly MatchQuery[]): Promise<(PlacedCandidate | null)[]> {
    const generation = this.serving();
    generation.batches++;
    try {
      return await generation.match(queries);
    } finally {
      generation.batches--;
      this.dropUnused();
    }
  }

  /**
   * The current generation. A thread that had not answered in time when the supervisor switched (one
   * still starting) may not hold it yet: it serves from the newest one it holds until the post arrives,
   * as an instance would that had not yet polled the catalog.
   */
  private serving(): Generation {
    const current = Atomics.load(this.control, CURRENT_GENERATION);
    const exact = this.generations.get(current);
    if (exact !== undefined) return exact;
    let newest: Generation | undefined;
    for (const held of this.generations.values()) {
      if (newest === undefined || held.number > newest.number) newest = held;
    }
    if (newest === undefined) throw new Error("no index generation was posted to this thread");
    return newest;
  }

  version(): string {
    return this.serving().version;
  }

  /** The generation new batches use. */
  current(): number {
    return Atomics.load(this.control, CURRENT_GENERATION);
  }

  /** Generations this thread still holds (the current one, and older ones with batches in flight). */
  held(): number {
    return this.generations.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.generations.values()].map((generation) => generation.close()));
    this.generations.clear();
  }

  /** Drops generations older than the current one that no batch uses, so their buffers can be freed. */
  dropUnused(): void {
    const current = Atomics.load(this.control, CURRENT_GENERATION);
    for (const [number, held] of this.generations) {
      if (number < current && held.batches === 0 && this.generations.has(current)) {
        this.generations.delete(number);
        void held.close();
      }
    }
  }
}
