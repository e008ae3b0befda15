import { sql } from "drizzle-orm";
import type { Store } from "../db.ts";
import { CatalogAssembler, type LineError, type StagedEvent } from "./assembler.ts";
import { queueCorrections } from "./corrections.ts";
import type { LineBatch } from "./lines.ts";
import {
  type MergeCounts,
  markImport,
  mergeEventChunk,
  mergePerformers,
  mergeVenues,
  prepareImport,
  recomputeInstants,
  refreshAttendedCopies,
} from "./merge.ts";
import { type CatalogTransaction, withCatalogTransaction } from "./transaction.ts";

/**
 * Imports a JSON Lines catalog (docs/operations.md §3) in one transaction. Every line is validated; events are
 * merged in chunks while later lines are still being parsed (PostgreSQL works on one chunk while this
 * process parses the next), and if any line is bad the transaction rolls back, leaving the catalog as it
 * was. Running servers see the new catalog, and a bumped `catalog_state.version`, at commit.
 */

/**
 * What an import reads: catalog lines, or a feed, whose lines are made inside the import's transaction
 * (its ids are read and given there, src/store/catalog/feeds).
 */
export type LineSource =
  | AsyncIterable<LineBatch>
  | ((tx: CatalogTransaction) => Promise<AsyncIterable<LineBatch>>);

export type ImportProgress = { phase: "read"; bytes: number; lines: number } | { phase: "finish" };

export type ImportOptions = {
  onProgress?: (progress: ImportProgress) => void;
  /** Events per merge (default CHUNK_EVENTS); small values let tests cross chunk boundaries. */
  chunkEvents?: number;
};

export type TableCounts = MergeCounts & { inFile: number; unchanged: number };

export type ImportSuccess = {
  ok: true;
  lines: number;
  venues: TableCounts;
  performers: TableCounts;
  events: TableCounts;
  /** Events that named a venue defined further down the file (held back until it was read). */
  deferredEvents: number;
  /** Venues whose time zone the file changed: all their events got new instants. */
  rezonedVenues: number;
  /** Existing events whose placement changed: their kept items are placed again (contract §15). */
  correctedEvents: number;
  /** The catalog version after the import: unchanged when the import changed nothing. */
  version: number;
};

export type ImportFailure = { ok: false; lines: number; errors: LineError[]; errorCount: number };

export type ImportReport = ImportSuccess | ImportFailure;

/** Events per merge: large enough for set-based SQL to pay off, small enough to overlap with parsing. */
const CHUNK_EVENTS = 100_000;

class RejectedFile extends Error {
  constructor(readonly report: ImportFailure) {
    super("catalog file has bad lines");
  }
}

/** Merges chunks one after another, each while the caller goes on parsing the next. */
class ChunkMerger {
  readonly total: MergeCounts = { inserted: 0, updated: 0 };
  private running: Promise<MergeCounts> | null = null;
  /** Highest id merged while every id so far ascended into an empty catalog; null once that stops. */
  private ascendingFrom: number | null;

  constructor(
    private readonly tx: CatalogTransaction,
    emptyCatalog: boolean,
  ) {
    this.ascendingFrom = emptyCatalog ? 0 : null;
  }

  /** Whether every event of the chunk is certainly new: ids above all merged so far, in an empty catalog. */
  private allNew(chunk: readonly StagedEvent[]): boolean {
    let previous = this.ascendingFrom;
    for (const event of chunk) {
      if (previous === null || event.id <= previous) {
        this.ascendingFrom = null;
        return false;
      }
      previous = event.id;
    }
    this.ascendingFrom = previous;
    return true;
  }

  async submit(chunk: readonly StagedEvent[]): Promise<void> {
    await this.settle();
    if (chunk.length === 0) return;
    const running = mergeEventChunk(this.tx, chunk, this.allNew(chunk));
    // Observed by the next settle(); this only keeps a failure from counting as unhandled meanwhile.
    running.catch(() => {});
    this.running = running;
  }

  async settle(): Promise<void> {
    const running = this.running;
    if (running === null) return;
    this.running = null;
    const counts = await running;
    this.total.inserted += counts.inserted;
    this.total.updated += counts.updated;
  }
}

function isBlank(text: string): boolean {
  return text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === "");
}

function counts(merged: MergeCounts, inFile: number): TableCounts {
  // A file that repeats an id counts each changed repetition, so clamp rather than report a negative.
  return { ...merged, inFile, unchanged: Math.max(0, inFile - merged.inserted - merged.updated) };
}

async function readAndMerge(
  source: AsyncIterable<LineBatch>,
  assembler: CatalogAssembler,
  merger: ChunkMerger,
  options: ImportOptions,
): Promise<number> {
  let lines = 0;
  let bytes = 0;
  let chunk: StagedEvent[] = [];
  for await (const batch of source) {
    const invalid = batch.invalidUtf8.length > 0 ? new Set(batch.invalidUtf8) : null;
    for (let i = 0; i < batch.lines.length; i++) {
      lines++;
      const text = batch.lines[i] ?? "";
      let staged: StagedEvent | null = null;
      if (invalid?.has(i)) assembler.reject(lines, "not valid UTF-8");
      else if (!isBlank(text)) staged = assembler.accept(lines, text);
      // Once a line is bad nothing will be kept, so merging stops; validation goes on to report every line.
      if (staged !== null && assembler.errorCount === 0) chunk.push(staged);
    }
    if (chunk.length >= (options.chunkEvents ?? CHUNK_EVENTS)) {
      await merger.submit(chunk);
      chunk = [];
    }
    bytes += batch.bytes;
    options.onProgress?.({ phase: "read", bytes, lines });
  }
  for (const staged of assembler.resolveDeferred()) chunk.push(staged);
  if (assembler.errorCount === 0) await merger.submit(chunk);
  return lines;
}

/**
 * Fresh planner statistics for the catalog tables as soon as an import has changed them, rather than
 * whenever autovacuum gets to it: until then they describe the old tables, and a plan cached by a server
 * (or a fresh one for a heavy user) may then, for example, hash-join a page's performers over the whole
 * table instead of looking them up by key. ANALYZE reads a fixed-size sample, so it stays short however
 * large the catalog; the visibility map is left to autovacuum, because a VACUUM here would visit every
 * page the import wrote. It cannot run inside the import's transaction, and takes no lock that readers
 * or writers wait on.
 */
async function analyzeCatalogTables(store: Store): Promise<void> {
  await store.rows(sql`analyze venues, performers, events, event_performers`);
}

function changedCatalog(tables: readonly MergeCounts[]): boolean {
  return tables.some((t) => t.inserted + t.updated > 0);
}

export async function importCatalog(
  store: Store,
  source: LineSource,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const report = await importInTransaction(store, source, options);
  if (report.ok && changedCatalog([report.venues, report.performers, report.events])) {
    await analyzeCatalogTables(store);
  }
  return report;
}

async function importInTransaction(
  store: Store,
  source: LineSource,
  options: ImportOptions,
): Promise<ImportReport> {
  try {
    return await withCatalogTransaction(store, async (tx) => {
      const prepared = await prepareImport(tx);
      const fromFeed = typeof source === "function";
      const assembler = new CatalogAssembler(prepared.known, fromFeed);
      const merger = new ChunkMerger(tx, prepared.emptyCatalog);
      let lines: number;
      try {
        lines = await readAndMerge(fromFeed ? await source(tx) : source, assembler, merger, options);
      } finally {
        // Even when reading fails, the connection must be out of COPY before the rollback.
        await merger.settle();
      }
      if (assembler.errorCount > 0) {
        throw new RejectedFile({
          ok: false,
          lines,
          errors: assembler.errors,
          errorCount: assembler.errorCount,
        });
      }
      options.onProgress?.({ phase: "finish" });
      const venues = await mergeVenues(tx, [...assembler.venues.values()]);
      const performers = await mergePerformers(tx, [...assembler.performers.values()]);
      await recomputeInstants(tx, [...assembler.rezonedVenues]);
      if (merger.total.updated > 0 || assembler.rezonedVenues.size > 0) await refreshAttendedCopies(tx);
      const version = await markImport(tx, changedCatalog([venues, performers, merger.total]));
      return {
        ok: true as const,
        lines,
        venues: counts(venues, assembler.venues.size),
        performers: counts(performers, assembler.performers.size),
        events: counts(merger.total, assembler.countDistinctEvents()),
        deferredEvents: assembler.deferredEvents,
        rezonedVenues: assembler.rezonedVenues.size,
        correctedEvents: await queueCorrections(tx, version),
        version,
      };
    });
  } catch (error) {
    if (error instanceof RejectedFile) return error.report;
    throw error;
  }
}
