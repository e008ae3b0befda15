import { itemPlace } from "../confidence/confidence.ts";
import { MatchEngineError, type WorkerFault } from "./faults.ts";
import { type IndexBuffers, VENUE_LATITUDE, VENUE_LONGITUDE, VENUE_RADIUS, VENUE_STRIDE } from "./layout.ts";
import type { MatchQuery, MatchSettings, PlacedCandidate } from "./matcher.ts";
import { outOfRange } from "./outOfRange.ts";
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
  private readonly settings: MatchSettings;

  constructor(
    /** The shared buffers: request threads match on the same ones (threadIndex.ts). */
    readonly index: IndexBuffers,
    readonly version: string,
    options: GenerationOptions,
  ) {
    this.number = index.generation;
    this.settings = options.settings;
    this.reader = new IndexReader(index);
    this.pool = options.pool.workers > 0 ? new MatchPool(index, this.reader, options.pool) : null;
  }

  /** Resolves when the generation can answer without waiting for threads to start. */
  async ready(): Promise<void> {
    await this.pool?.ready();
  }

  async match(queries: readonly MatchQuery[]): Promise<(PlacedCandidate | null)[]> {
    const rows = this.pool === null ? this.matchInline(queries) : await this.pool.match(queries);
    return this.candidates(queries, rows);
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

  /**
   * The answers from the rows the search found: event row and venue slot per query. The place is
   * worked out again from the index's own numbers with the reference's arithmetic (itemPlace), so both
   * answer bit-equal places.
   */
  private candidates(queries: readonly MatchQuery[], rows: Int32Array): (PlacedCandidate | null)[] {
    const { eventId, eventLicensed, eventWindow, venueId, venueRecord } = this.reader.arrays;
    const beforeMs = this.settings.beforeMinutes * 60_000;
    const afterMs = this.settings.afterMinutes * 60_000;
    const answers: (PlacedCandidate | null)[] = new Array(rows.length / 2);
    for (let i = 0; i < answers.length; i++) {
      const row = rows[i * 2] ?? outOfRange(rows, i * 2, "rows");
      const query = queries[i] ?? outOfRange(queries, i, "queries");
      if (row < 0) {
        answers[i] = null;
        continue;
      }
      const slot = rows[i * 2 + 1] ?? outOfRange(rows, i * 2 + 1, "rows");
      const record = slot * VENUE_STRIDE;
      const venue = {
        latitude:
          venueRecord[record + VENUE_LATITUDE] ??
          outOfRange(venueRecord, record + VENUE_LATITUDE, "venueRecord"),
        longitude:
          venueRecord[record + VENUE_LONGITUDE] ??
          outOfRange(venueRecord, record + VENUE_LONGITUDE, "venueRecord"),
        radiusM:
          venueRecord[record + VENUE_RADIUS] ?? outOfRange(venueRecord, record + VENUE_RADIUS, "venueRecord"),
      };
      const event = {
        startsAtMs: (eventWindow[row * 2] ?? outOfRange(eventWindow, row * 2, "eventWindow")) + beforeMs,
        endsAtMs: (eventWindow[row * 2 + 1] ?? outOfRange(eventWindow, row * 2 + 1, "eventWindow")) - afterMs,
      };
      answers[i] = {
        eventId: eventId[row] ?? outOfRange(eventId, row, "eventId"),
        venueId: venueId[slot] ?? outOfRange(venueId, slot, "venueId"),
        licensed:
          ((eventLicensed[row >>> 5] ?? outOfRange(eventLicensed, row >>> 5, "eventLicensed")) &
            (1 << (row & 31))) !==
          0,
        place: itemPlace(query, venue, event, this.settings),
        venue,
      };
    }
    return answers;
  }
}
