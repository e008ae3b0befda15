import { FIRST_FEED_ID } from "../schema/catalog.ts";
import type { EventStatus } from "./eventStatus.ts";
import { eventInstants, startOfLocalDay } from "./eventWindow.ts";
import { canonicalTimeZone, parseLocalDateTime } from "./localTime.ts";
import { type EventRecord, type PerformerRecord, parseRecord, type VenueRecord } from "./records.ts";

/**
 * Turns validated lines into rows for the staging tables and performs the checks that need more than
 * one line: references to venues and performers (defined in the file or already in the catalog), and the
 * venue zone that turns an event's local times into instants.
 *
 * Order inside a file is free. An event whose venue is neither in the catalog nor earlier in the file
 * waits in memory until the end of the file (its instants need the venue's zone); a performer may be
 * defined anywhere. Files that list venues and performers first (as `catalog generate` does) keep
 * memory flat whatever their size.
 */

export type LineError = { line: number; message: string };

export type StagedVenue = Omit<VenueRecord, "type"> & { line: number; timezone: string };
export type StagedPerformer = Omit<PerformerRecord, "type"> & { line: number };
export type StagedEvent = {
  line: number;
  id: number;
  name: string;
  venueId: number;
  startsAtLocal: string;
  endsAtLocal: string | null;
  startsMs: number;
  endsMs: number | null;
  licensed: boolean;
  status: EventStatus;
  timeUnknown: boolean;
  performerIds: number[];
  headliners: (boolean | null)[];
};

/** What the catalog already holds, read inside the import transaction. */
export type KnownCatalog = { venueZones: Map<number, string>; performerIds: Set<number> };

/** Reported bad lines are capped; the count is always exact. */
export const MAX_REPORTED_ERRORS = 1000;

/** The first performer id an event lists twice (the pair would break the event_performers key), or null. */
function listedTwice(performers: EventRecord["performers"]): number | null {
  // Events list a handful of performers: comparing pairs beats allocating a Set for each of millions of lines.
  for (let i = 1; i < performers.length; i++) {
    const id = performers[i]?.id;
    for (let j = 0; j < i; j++) if (performers[j]?.id === id) return id ?? null;
  }
  return null;
}

export class CatalogAssembler {
  readonly venues = new Map<number, StagedVenue>();
  readonly performers = new Map<number, StagedPerformer>();
  /** Venues whose zone this file changes: their events' instants are recomputed after the merge. */
  readonly rezonedVenues = new Set<number>();
  readonly errors: LineError[] = [];
  errorCount = 0;
  eventCount = 0;
  /** Events that named a venue not known yet when their line was read. */
  deferredEvents = 0;
  private readonly venueZones: Map<number, string>;
  private readonly performerIds: Set<number>;
  private readonly deferred: { line: number; record: EventRecord }[] = [];
  /** Performer id -> lines that reference it before it is defined. */
  private readonly pendingPerformers = new Map<number, number[]>();
  private eventIds = new Int32Array(1024);

  /** `fromFeed`: the lines come from a feed import, whose ids are FIRST_FEED_ID and up. */
  constructor(
    known: KnownCatalog,
    private readonly fromFeed = false,
  ) {
    this.venueZones = known.venueZones;
    this.performerIds = known.performerIds;
  }

  /** Checks one line; returns the event row to stage now, if the line is an event that can be resolved. */
  accept(line: number, text: string): StagedEvent | null {
    const parsed = parseRecord(text);
    if ("error" in parsed) return this.reject(line, parsed.error);
    const record = parsed.record;
    if (!this.fromFeed && record.id >= FIRST_FEED_ID) {
      return this.reject(
        line,
        `id: ids from ${FIRST_FEED_ID} up are given by feed imports, got ${record.id}`,
      );
    }
    if (record.type === "venue") return this.acceptVenue(line, record);
    if (record.type === "performer") {
      const { type: _, ...fields } = record;
      this.performers.set(record.id, { ...fields, line });
      this.performerIds.add(record.id);
      this.pendingPerformers.delete(record.id);
      return null;
    }
    return this.acceptEvent(line, record);
  }

  /** Events that waited for a venue defined later in the file; call once every line was accepted. */
  resolveDeferred(): StagedEvent[] {
    const staged: StagedEvent[] = [];
    for (const { line, record } of this.deferred) {
      const event = this.stage(line, record, this.venueZones.get(record.venue_id));
      if (event !== null) staged.push(event);
    }
    this.deferred.length = 0;
    for (const [performerId, lines] of this.pendingPerformers) {
      for (const line of lines)
        this.reject(line, `performer ${performerId} is not defined in this file or in the catalog`);
    }
    this.pendingPerformers.clear();
    this.errors.sort((a, b) => a.line - b.line);
    return staged;
  }

  /**
   * Distinct ids among the staged events. Fewer than `eventCount` means an id occurs twice in the file:
   * the last line wins and staging is deduplicated. Sorting a typed array of ids costs far less than a
   * Set of ten million numbers.
   */
  countDistinctEvents(): number {
    const ids = this.eventIds.subarray(0, this.eventCount).sort();
    let distinct = ids.length > 0 ? 1 : 0;
    for (let i = 1; i < ids.length; i++) if (ids[i] !== ids[i - 1]) distinct++;
    return distinct;
  }

  private acceptVenue(line: number, record: VenueRecord): null {
    const zone = canonicalTimeZone(record.timezone);
    if (zone === null)
      return this.reject(line, `timezone: ${JSON.stringify(record.timezone)} is not an IANA time zone`);
    const previous = this.venueZones.get(record.id);
    if (previous !== undefined && previous !== zone) this.rezonedVenues.add(record.id);
    this.venueZones.set(record.id, zone);
    const { type: _, ...fields } = record;
    this.venues.set(record.id, { ...fields, line, timezone: zone });
    return null;
  }

  private acceptEvent(line: number, record: EventRecord): StagedEvent | null {
    const twice = listedTwice(record.performers);
    if (twice !== null) return this.reject(line, `performer ${twice} is listed twice`);
    const zone = this.venueZones.get(record.venue_id);
    if (zone === undefined) {
      this.deferred.push({ line, record });
      this.deferredEvents++;
      this.trackPerformers(line, record);
      return null;
    }
    this.trackPerformers(line, record);
    return this.stage(line, record, zone);
  }

  private trackPerformers(line: number, record: EventRecord): void {
    for (const { id } of record.performers) {
      if (this.performerIds.has(id)) continue;
      const lines = this.pendingPerformers.get(id);
      if (lines === undefined) this.pendingPerformers.set(id, [line]);
      else lines.push(line);
    }
  }

  private stage(line: number, record: EventRecord, zone: string | undefined): StagedEvent | null {
    if (zone === undefined) {
      return this.reject(line, `venue ${record.venue_id} is not defined in this file or in the catalog`);
    }
    const starts = parseLocalDateTime(record.starts_at_local);
    if (starts === null)
      return this.reject(line, "starts_at_local: expected a real local date-time YYYY-MM-DDTHH:MM:SS");
    const endsText = record.ends_at_local ?? null;
    const ends = endsText === null ? null : parseLocalDateTime(endsText);
    if (endsText !== null && ends === null) {
      return this.reject(line, "ends_at_local: expected a real local date-time YYYY-MM-DDTHH:MM:SS, or null");
    }
    if (endsText !== null && endsText < record.starts_at_local) {
      return this.reject(line, "ends_at_local is before starts_at_local");
    }
    this.recordEventId(record.id);
    const timeUnknown = record.time_unknown ?? false;
    return {
      line,
      id: record.id,
      name: record.name,
      venueId: record.venue_id,
      startsAtLocal: timeUnknown ? startOfLocalDay(record.starts_at_local) : record.starts_at_local,
      endsAtLocal: endsText,
      ...eventInstants(starts, ends, timeUnknown, zone),
      licensed: record.licensed ?? true,
      status: record.status ?? "scheduled",
      timeUnknown,
      performerIds: record.performers.map((p) => p.id),
      headliners: record.performers.map((p) => p.is_headliner ?? null),
    };
  }

  private recordEventId(id: number): void {
    if (this.eventCount === this.eventIds.length) {
      const grown = new Int32Array(this.eventIds.length * 2);
      grown.set(this.eventIds);
      this.eventIds = grown;
    }
    this.eventIds[this.eventCount++] = id;
  }

  /** Records a bad line: always counted, listed up to MAX_REPORTED_ERRORS. */
  reject(line: number, message: string): null {
    this.errorCount++;
    if (this.errors.length < MAX_REPORTED_ERRORS) this.errors.push({ line, message });
    return null;
  }
}
