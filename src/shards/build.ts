import { Worker } from "node:worker_threads";
import { buildCellSections } from "./build-cells.ts";
import { buildEventSections } from "./build-events.ts";
import { type CatalogColumns, columnBuffers } from "./columns.ts";
import { bufferOf, type IndexBuffers } from "./layout.ts";
import type { MatchSettings } from "./matcher.ts";

const MINUTE_MS = 60_000;

export type BuildOptions = { settings: MatchSettings; shards: number; generation: number };

/** Builds one index generation from catalog columns; layout.ts says what lands where. */
export function buildIndex(columns: CatalogColumns, options: BuildOptions): IndexBuffers {
  if (!Number.isInteger(options.shards) || options.shards < 1 || options.shards > 65_535) {
    throw new RangeError(`shards must be an integer from 1 to 65535, got ${options.shards}`);
  }
  const events = buildEventSections(columns, options.settings);
  const cells = buildCellSections(events.venueRecord, options.shards);
  return {
    generation: options.generation,
    beforeMs: options.settings.beforeMinutes * MINUTE_MS,
    afterMs: options.settings.afterMinutes * MINUTE_MS,
    shards: options.shards,
    eventWindow: bufferOf(events.eventWindow),
    eventSample: bufferOf(events.eventSample),
    eventId: bufferOf(events.eventId),
    eventLicensed: bufferOf(events.eventLicensed),
    venueId: bufferOf(events.venueId),
    venueRecord: bufferOf(events.venueRecord),
    venueEvents: bufferOf(events.venueEvents),
    cellVenues: bufferOf(cells.cellVenues),
    slotCell: bufferOf(cells.slotCell),
    slotVenues: bufferOf(cells.slotVenues),
    shardSlots: bufferOf(cells.shardSlots),
    blockSlot: bufferOf(cells.blockSlot),
    blockShard: bufferOf(cells.blockShard),
    fineWords: bufferOf(cells.fineWords),
    fineSlot: bufferOf(cells.fineSlot),
    slotLists: bufferOf(cells.slotLists),
  };
}

/** A one-off build on its own thread, so a rebuild never stalls the server's requests. */
export type BuildJob = { columns: CatalogColumns; options: BuildOptions };

const threadUrl = new URL("./build-thread.ts", import.meta.url);

/**
 * Builds on a thread of its own. The columns are moved, not copied (the caller must not use them
 * afterwards); the index comes back as SharedArrayBuffers, which postMessage shares rather than copies.
 */
export function buildInBackground(columns: CatalogColumns, options: BuildOptions): Promise<IndexBuffers> {
  return new Promise((resolve, reject) => {
    const job: BuildJob = { columns, options };
    const thread = new Worker(threadUrl, { workerData: job, transferList: columnBuffers(columns) });
    let settled = false;
    thread.once("message", (buffers: IndexBuffers) => {
      settled = true;
      resolve(buffers);
      void thread.terminate();
    });
    thread.once("error", (error) => {
      settled = true;
      reject(error);
    });
    thread.once("exit", (code) => {
      if (!settled) reject(new Error(`the index build thread exited with code ${code}`));
    });
  });
}
