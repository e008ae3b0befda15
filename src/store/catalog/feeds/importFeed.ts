import type { Store } from "../../db.ts";
import { type ImportOptions, type ImportSuccess, importCatalog } from "../import.ts";
import { memoryLines } from "../lines.ts";
import { readFeedFiles } from "./feedFiles.ts";
import type { FeedNotice, FeedSource } from "./feedPage.ts";
import { type FeedRecords, feedRecords } from "./feedRecords.ts";

/**
 * `catalog import --format ticketmaster|seatgeek FILE…` (docs/operations.md §3, *Feeds*): every page of
 * every file is read first, then one import transaction gives ids, links shows and merges the records as a
 * catalog file's, all or nothing.
 */

export type FeedImportSuccess = ImportSuccess & {
  /** Events matched to a show another source created (counted there, not written). */
  linked: number;
  /** Venues without usable coordinates and events left out, with their places. */
  skipped: FeedNotice[];
};

export type FeedImportFailure = { ok: false; errors: FeedNotice[]; errorCount: number };

export async function importFeed(
  store: Store,
  source: FeedSource,
  paths: readonly string[],
  options: ImportOptions = {},
): Promise<FeedImportSuccess | FeedImportFailure> {
  const files = readFeedFiles(source, paths);
  if (files.errors.length > 0) return { ok: false, errors: files.errors, errorCount: files.errors.length };
  let records: FeedRecords = { lines: [], places: [], linked: 0, skipped: [] };
  const report = await importCatalog(
    store,
    async (tx) => {
      records = await feedRecords(tx, source, files.pages);
      return memoryLines(records.lines);
    },
    options,
  );
  if (!report.ok) {
    const errors = report.errors.map((error) => ({
      place: records.places[error.line - 1] ?? `record ${error.line}`,
      message: error.message,
    }));
    return { ok: false, errors, errorCount: report.errorCount };
  }
  const skipped = [...files.pages.flatMap((page) => page.skipped), ...records.skipped];
  return { ...report, linked: records.linked, skipped };
}
