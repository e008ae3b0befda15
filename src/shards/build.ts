import { Worker } from "node:worker_threads";
import { buildCellSections, type CellSections } from "./buildCells.ts";
import { type EventSections, layoutEvents, planVenues, type VenueSections } from "./buildEvents.ts";
import { type CatalogColumns, columnBuffers } from "./columns.ts";
import { bufferOf, type IndexBuffers } from "./layout.ts";
import type { MatchSettings } from "./matcher.ts";

const MINUTE_MS = 60_000;

export type BuildOptions = { settings: MatchSettings; shards: number; generation: number };

function checkShards(shards: number): void {
  if (!Number.isInteger(shards) || shards < 1 || shards > 65_535) {
    throw new RangeError(`shards must be an integer from 1 to 65535, got ${shards}`);
  }
}

function assemble(
  options: BuildOptions,
  venues: VenueSections,
  events: EventSections,
  cells: CellSections,
): IndexBuffers {
  return {
    generation: options.generation,
    beforeMs: options.settings.beforeMinutes * MINUTE_MS,
    afterMs: options.settings.afterMinutes * MINUTE_MS,
    shards: options.shards,
    eventWindow: bufferOf(events.eventWindow),
    eventSample: bufferOf(events.eventSample),
    eventId: bufferOf(events.eventId),
    eventLicensed: bufferOf(events.eventLicensed),
    venueId: bufferOf(venues.venueId),
    venueRecord: bufferOf(venues.venueRecord),
    venueEvents: bufferOf(venues.venueEvents),
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

/** Builds one index generation from catalog columns on the calling thread; layout.ts says what lands where. */
export function buildIndex(columns: CatalogColumns, options: BuildOptions): IndexBuffers {
  checkShards(options.shards);
  const venues = planVenues(columns, options.settings);
  const cells = buildCellSections(venues.venueRecord, options.shards);
  return assemble(options, venues, layoutEvents(columns, venues), cells);
}

/**
 * The two halves of a background build. The events thread plans the venues, hands them over (shared,
 * not copied) and lays out the events while the cells thread registers venues in cells and builds the
 * grid: on two cores the build takes about as long as its longer half.
 */
export type BuildJob =
  | { role: "events"; columns: CatalogColumns; options: BuildOptions }
  | { role: "cells"; venueRecord: Float64Array; shards: number };

export type BuildMessage =
  | { kind: "venues"; sections: VenueSections }
  | { kind: "events"; sections: EventSections }
  | { kind: "cells"; sections: CellSections };

const threadUrl = new URL("./buildThread.ts", import.meta.url);

/**
 * Builds on threads of their own, so a rebuild never stalls the server's requests. The columns are
 * moved, not copied (the caller must not use them afterwards); the sections come back as typed arrays
 * over SharedArrayBuffers, which postMessage shares rather than copies.
 */
export function buildInBackground(columns: CatalogColumns, options: BuildOptions): Promise<IndexBuffers> {
  checkShards(options.shards);
  return new Promise((resolve, reject) => {
    const threads: Worker[] = [];
    const parts: { venues?: VenueSections; events?: EventSections; cells?: CellSections } = {};
    let settled = false;
    const settle = (error: unknown) => {
      if (settled) return;
      settled = true;
      for (const thread of threads) void thread.terminate();
      const { venues, events, cells } = parts;
      if (error === null && venues && events && cells) resolve(assemble(options, venues, events, cells));
      else reject(error);
    };
    const start = (job: BuildJob, transferList: ArrayBuffer[], last: BuildMessage["kind"]) => {
      const thread = new Worker(threadUrl, { workerData: job, transferList });
      threads.push(thread);
      let done = false;
      thread.on("message", (message: BuildMessage) => {
        if (message.kind === "venues") {
          parts.venues = message.sections;
          start(
            { role: "cells", venueRecord: message.sections.venueRecord, shards: options.shards },
            [],
            "cells",
          );
        } else if (message.kind === "events") {
          parts.events = message.sections;
        } else {
          parts.cells = message.sections;
        }
        done ||= message.kind === last;
        if (parts.venues && parts.events && parts.cells) settle(null);
      });
      thread.once("error", settle);
      thread.once("exit", (code) => {
        if (!done) settle(new Error(`an index build thread (${job.role}) exited with code ${code}`));
      });
    };
    start({ role: "events", columns, options }, columnBuffers(columns), "events");
  });
}
