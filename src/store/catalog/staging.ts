import type { StagedEvent, StagedPerformer, StagedVenue } from "./assembler.ts";
import { arrayElement, encodeCopyRow, escapeText, type Row } from "./copyText.ts";

/**
 * Tables an import loads in bulk, each knowing how to encode an item as a COPY text line (PostgreSQL)
 * and as plain values (PGlite). Most are temporary staging tables that live for the import transaction
 * and are never WAL-logged; on the first load of an empty catalog, events and their performer pairs go
 * straight into the catalog tables instead (see mergeEventChunk).
 */

export type BulkTable<T> = {
  name: string;
  columns: readonly string[];
  /** The item's rows as COPY text lines (most items are one row; an event has one per performer). */
  copyLines(item: T): string;
  rows(item: T): Row[];
};

export const STAGING_DDL = [
  `create temp table stage_venues (line bigint, id integer, name text, city text, region text, country text,
    latitude float8, longitude float8, timezone text, radius_m integer) on commit drop`,
  `create temp table stage_performers (line bigint, id integer, name text, category text, image_url text)
    on commit drop`,
  `create temp table stage_events (line bigint, id integer, name text, venue_id integer, starts_at_local text,
    ends_at_local text, starts_ms bigint, ends_ms bigint, licensed boolean, status text, time_unknown boolean,
    performer_ids integer[],
    headliners boolean[], existing boolean not null default false) on commit drop`,
  "create temp table stage_instants (id integer, starts_ms bigint, ends_ms bigint) on commit drop",
  // Existing events this import rewrote or gave new instants: their copies in user_events are checked.
  "create temp table stage_rewritten (id integer) on commit drop",
];

function rowTable<T>(name: string, columns: readonly string[], values: (item: T) => Row): BulkTable<T> {
  return { name, columns, rows: (item) => [values(item)], copyLines: (item) => encodeCopyRow(values(item)) };
}

export const stageVenues = rowTable<StagedVenue>(
  "stage_venues",
  ["line", "id", "name", "city", "region", "country", "latitude", "longitude", "timezone", "radius_m"],
  (v) => [
    v.line,
    v.id,
    v.name,
    v.city,
    v.region ?? null,
    v.country,
    v.latitude,
    v.longitude,
    v.timezone,
    v.radius_m ?? null,
  ],
);

export const stagePerformers = rowTable<StagedPerformer>(
  "stage_performers",
  ["line", "id", "name", "category", "image_url"],
  (p) => [p.line, p.id, p.name, p.category ?? null, p.image_url ?? null],
);

export type Instants = { id: number; startsMs: number; endsMs: number | null };

export const stageInstants = rowTable<Instants>("stage_instants", ["id", "starts_ms", "ends_ms"], (i) => [
  i.id,
  i.startsMs,
  i.endsMs,
]);

/**
 * Events are the bulk of a catalog, so their COPY line skips the generic row encoder: ids and numbers
 * need no escaping, and local times are validated `YYYY-MM-DDTHH:MM:SS`.
 */
function eventCopyLine(e: StagedEvent): string {
  const endsAtLocal = e.endsAtLocal ?? "\\N";
  const endsMs = e.endsMs ?? "\\N";
  const flags = `${e.licensed ? "t" : "f"}\t${e.status}\t${e.timeUnknown ? "t" : "f"}`;
  const performers = `{${e.performerIds.join(",")}}\t{${e.headliners.map(arrayElement).join(",")}}`;
  return `${e.line}\t${e.id}\t${escapeText(e.name)}\t${e.venueId}\t${e.startsAtLocal}\t${endsAtLocal}\t${e.startsMs}\t${endsMs}\t${flags}\t${performers}\n`;
}

export const stageEvents: BulkTable<StagedEvent> = {
  name: "stage_events",
  columns: [
    "line",
    "id",
    "name",
    "venue_id",
    "starts_at_local",
    "ends_at_local",
    "starts_ms",
    "ends_ms",
    "licensed",
    "status",
    "time_unknown",
    "performer_ids",
    "headliners",
  ],
  copyLines: eventCopyLine,
  rows: (e) => [
    [
      e.line,
      e.id,
      e.name,
      e.venueId,
      e.startsAtLocal,
      e.endsAtLocal,
      e.startsMs,
      e.endsMs,
      e.licensed,
      e.status,
      e.timeUnknown,
      e.performerIds,
      e.headliners,
    ],
  ],
};

function isoInstant(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The catalog's event columns an import writes, in the order both its paths give them. */
export const EVENT_COLUMNS = [
  "id",
  "name",
  "venue_id",
  "starts_at_local",
  "ends_at_local",
  "starts_at",
  "ends_at",
  "licensed",
  "status",
  "time_unknown",
] as const;

export const directEvents: BulkTable<StagedEvent> = {
  name: "events",
  columns: EVENT_COLUMNS,
  copyLines: (e) => {
    const ends = `${e.endsAtLocal ?? "\\N"}\t${isoInstant(e.startsMs)}\t${isoInstant(e.endsMs) ?? "\\N"}`;
    const flags = `${e.licensed ? "t" : "f"}\t${e.status}\t${e.timeUnknown ? "t" : "f"}`;
    return `${e.id}\t${escapeText(e.name)}\t${e.venueId}\t${e.startsAtLocal}\t${ends}\t${flags}\n`;
  },
  rows: (e) => [
    [
      e.id,
      e.name,
      e.venueId,
      e.startsAtLocal,
      e.endsAtLocal,
      isoInstant(e.startsMs),
      isoInstant(e.endsMs),
      e.licensed,
      e.status,
      e.timeUnknown,
    ],
  ],
};

/** An event's performer pairs: one row per performer, in billing order (position counts from 1). */
export const directPairs: BulkTable<StagedEvent> = {
  name: "event_performers",
  columns: ["event_id", "performer_id", "is_headliner", "position"],
  copyLines: (e) => {
    let lines = "";
    for (let i = 0; i < e.performerIds.length; i++) {
      const headliner = e.headliners[i];
      const flag = headliner === true ? "t" : headliner === false ? "f" : "\\N";
      lines += `${e.id}\t${e.performerIds[i]}\t${flag}\t${i + 1}\n`;
    }
    return lines;
  },
  rows: (e) => e.performerIds.map((id, i) => [e.id, id, e.headliners[i] ?? null, i + 1]),
};
