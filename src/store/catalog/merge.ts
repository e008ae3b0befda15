import { ATTENDANCE_COPIES_LOCK, CATALOG_IMPORT_LOCK } from "../db.ts";
import type { KnownCatalog, StagedEvent, StagedPerformer, StagedVenue } from "./assembler.ts";
import { CORRECTION_DDL, noteAddedEvents, notedPlacements, noteVenuePlacements } from "./corrections.ts";
import { eventInstants } from "./eventWindow.ts";
import { parseLocalDateTime } from "./localTime.ts";
import {
  type BulkTable,
  directEvents,
  directPairs,
  EVENT_COLUMNS,
  type Instants,
  STAGING_DDL,
  stageEvents,
  stageInstants,
  stagePerformers,
  stageVenues,
} from "./staging.ts";
import type { CatalogTransaction } from "./transaction.ts";

/**
 * The set-based half of an import: staged rows become catalog rows with one statement per table.
 * Upserts only rewrite rows whose values differ, so re-importing an unchanged file leaves tables and
 * indexes alone. Events merge chunk by chunk while the rest of the file is still being parsed.
 */

export type MergeCounts = { inserted: number; updated: number };

export type PreparedImport = {
  known: KnownCatalog;
  /** Whether the catalog held no events: then ids that only ascend cannot collide with stored ones. */
  emptyCatalog: boolean;
};

/** Takes the import lock, creates the staging tables and reads what the file may refer to. */
export async function prepareImport(tx: CatalogTransaction): Promise<PreparedImport> {
  await tx.query(`select pg_advisory_xact_lock(${CATALOG_IMPORT_LOCK})`);
  // Room for the hash joins and sorts of a chunk in memory; local to this transaction.
  await tx.query("set local work_mem = '128MB'");
  for (const ddl of [...STAGING_DDL, ...CORRECTION_DDL]) await tx.query(ddl);
  const venues = await tx.query<{ id: number; timezone: string }>("select id, timezone from venues");
  const performers = await tx.query<{ id: number }>("select id from performers");
  const [events] = await tx.query<{ present: boolean }>("select exists (select 1 from events) as present");
  return {
    known: {
      venueZones: new Map(venues.map((v) => [v.id, v.timezone])),
      performerIds: new Set(performers.map((p) => p.id)),
    },
    emptyCatalog: events?.present !== true,
  };
}

async function stage<T>(tx: CatalogTransaction, table: BulkTable<T>, items: readonly T[]): Promise<void> {
  const writer = tx.bulk(table);
  await writer.write(items);
  await writer.close();
}

/** Runs an `insert ... on conflict do update` and counts new rows (xmax = 0) and changed ones. */
async function counted(tx: CatalogTransaction, upsert: string): Promise<MergeCounts> {
  const [row] = await tx.query<MergeCounts>(`with written as (${upsert} returning (xmax = 0) as inserted)
    select (count(*) filter (where inserted))::int as inserted,
      (count(*) filter (where not inserted))::int as updated
    from written`);
  return row ?? { inserted: 0, updated: 0 };
}

function upsert(table: string, columns: readonly string[], select: string): string {
  const updated = columns.filter((c) => c !== "id");
  return `insert into ${table} as t (${columns.join(", ")}) ${select}
    on conflict (id) do update set ${updated.map((c) => `${c} = excluded.${c}`).join(", ")}
    where (${updated.map((c) => `t.${c}`).join(", ")}) is distinct from (${updated.map((c) => `excluded.${c}`).join(", ")})`;
}

/** Whether an id occurs twice in the chunk; files list events in id order, which answers without sorting. */
function hasDuplicateIds(chunk: readonly StagedEvent[]): boolean {
  let ascending = true;
  for (let i = 1; i < chunk.length && ascending; i++)
    ascending = (chunk[i]?.id ?? 0) > (chunk[i - 1]?.id ?? 0);
  if (ascending) return false;
  const ids = Int32Array.from(chunk, (e) => e.id).sort();
  for (let i = 1; i < ids.length; i++) if (ids[i] === ids[i - 1]) return true;
  return false;
}

/** Runs a data-modifying statement ending in `returning 1` and counts its rows. */
async function countRows(tx: CatalogTransaction, statement: string): Promise<number> {
  const [row] = await tx.query<{ count: number }>(
    `with written as (${statement}) select count(*)::int as count from written`,
  );
  return row?.count ?? 0;
}

const STAGED_EVENTS = `select id, name, venue_id, starts_at_local, ends_at_local, to_timestamp(starts_ms::float8 / 1000),
  to_timestamp(ends_ms::float8 / 1000), licensed, status, time_unknown from stage_events`;
const STAGED_PAIRS = `select s.id, p.performer_id, p.is_headliner, p.position::int
  from stage_events s cross join lateral unnest(s.performer_ids, s.headliners) with ordinality
    as p(performer_id, is_headliner, position)`;

type EventIdRow = { id: number };

/** Upserts the chunk's existing events; the ids of those it rewrote are returned and noted in stage_rewritten. */
async function rewriteExisting(tx: CatalogTransaction): Promise<EventIdRow[]> {
  return tx.query<EventIdRow>(
    `with written as (${upsert("events", EVENT_COLUMNS, `${STAGED_EVENTS} where existing`)} returning t.id),
      noted as (insert into stage_rewritten (id) select id from written),
      ${notedPlacements("written")}
    select id from written`,
  );
}

/**
 * Replaces the performer lists of the chunk's existing events, writing only the pairs that differ, and
 * returns the ids of the events whose billing changed (a pair removed, added, reordered or re-flagged).
 */
async function rebillExisting(tx: CatalogTransaction): Promise<EventIdRow[]> {
  const removed = await withIndexProbes(tx, () =>
    tx.query<EventIdRow>(`delete from event_performers ep using stage_events s
      where s.existing and ep.event_id = s.id and not (ep.performer_id = any (s.performer_ids))
      returning ep.event_id as id`),
  );
  const written =
    await tx.query<EventIdRow>(`insert into event_performers as t (event_id, performer_id, is_headliner, position)
    ${STAGED_PAIRS} where s.existing
    on conflict (event_id, performer_id) do update set is_headliner = excluded.is_headliner, position = excluded.position
    where (t.is_headliner, t.position) is distinct from (excluded.is_headliner, excluded.position)
    returning t.event_id as id`);
  return [...removed, ...written];
}

/**
 * Upserts one chunk of events with their performer lists, which replace the previous ones.
 *
 * When the caller knows every event of the chunk is new (`allNew`: the first load of an empty catalog,
 * ids ascending), rows are copied straight into the catalog tables: COPY inserts in batches and skips
 * the staging table, the cheapest path PostgreSQL has.
 *
 * New events take plain inserts: ON CONFLICT costs markedly more CPU per row (it probes, then inserts
 * speculatively; docs/performance.md §5), and a first load is all new rows. Which staged events exist
 * already is decided by one primary-key probe each, written as a scalar subquery so the planner cannot
 * turn it into a join that scans the whole events table for every chunk. Existing events then go through
 * the usual upsert, which rewrites only rows whose values differ.
 */
export async function mergeEventChunk(
  tx: CatalogTransaction,
  chunk: readonly StagedEvent[],
  allNew: boolean,
): Promise<MergeCounts> {
  if (allNew) {
    await stage(tx, directEvents, chunk);
    await stage(tx, directPairs, chunk);
    return { inserted: chunk.length, updated: 0 };
  }
  await stage(tx, stageEvents, chunk);
  if (hasDuplicateIds(chunk)) {
    // The last line of an id wins, as if the file had been imported one line at a time.
    await tx.query(
      "delete from stage_events s using stage_events later where later.id = s.id and later.line > s.line",
    );
  }
  const existing = await countRows(
    tx,
    "update stage_events s set existing = true where (select true from events e where e.id = s.id) returning 1",
  );
  await noteAddedEvents(tx);
  const inserted = await countRows(
    tx,
    `insert into events (${EVENT_COLUMNS.join(", ")}) ${STAGED_EVENTS} where not existing returning 1`,
  );
  await tx.query(`insert into event_performers (event_id, performer_id, is_headliner, position)
    ${STAGED_PAIRS} where not s.existing`);
  // An event counts as changed once, whether its own row, its billing or both changed.
  const changed = new Set<number>();
  if (existing > 0) {
    for (const { id } of await rewriteExisting(tx)) changed.add(id);
    for (const { id } of await rebillExisting(tx)) changed.add(id);
  }
  await tx.query("truncate stage_events");
  return { inserted, updated: changed.size };
}

/** Runs `work` without hash joins, which would hash a staged chunk against a whole catalog table. */
async function withIndexProbes<T>(tx: CatalogTransaction, work: () => Promise<T>): Promise<T> {
  await tx.query("set local enable_hashjoin = off");
  // Not in a finally: after a failure the transaction is aborted and rolls back anyway.
  const result = await work();
  await tx.query("set local enable_hashjoin = on");
  return result;
}

export async function mergeVenues(
  tx: CatalogTransaction,
  venues: readonly StagedVenue[],
): Promise<MergeCounts> {
  await stage(tx, stageVenues, venues);
  await noteVenuePlacements(tx);
  const columns = stageVenues.columns.filter((c) => c !== "line");
  return counted(tx, upsert("venues", columns, `select ${columns.join(", ")} from stage_venues`));
}

export async function mergePerformers(
  tx: CatalogTransaction,
  performers: readonly StagedPerformer[],
): Promise<MergeCounts> {
  await stage(tx, stagePerformers, performers);
  const columns = stagePerformers.columns.filter((c) => c !== "line");
  return counted(tx, upsert("performers", columns, `select ${columns.join(", ")} from stage_performers`));
}

/**
 * A venue whose zone changed invalidates the instants of every event there, including events this file
 * does not mention and events staged before the file reached the venue's new line. Zone corrections are
 * rare, so those events are simply recomputed with the same rules as at staging.
 */
export async function recomputeInstants(tx: CatalogTransaction, venueIds: readonly number[]): Promise<void> {
  if (venueIds.length === 0) return;
  const rows = await tx.query<{
    id: number;
    starts_at_local: string;
    ends_at_local: string | null;
    time_unknown: boolean;
    timezone: string;
  }>(
    `select e.id, e.starts_at_local, e.ends_at_local, e.time_unknown, v.timezone from events e join venues v on v.id = e.venue_id
     where e.venue_id = any ('{${venueIds.join(",")}}'::int[])`,
  );
  const instants: Instants[] = [];
  for (const row of rows) {
    // Stored local times passed the import's validation, so they parse.
    const starts = parseLocalDateTime(row.starts_at_local);
    const ends = row.ends_at_local === null ? null : parseLocalDateTime(row.ends_at_local);
    if (starts === null) continue;
    instants.push({ id: row.id, ...eventInstants(starts, ends, row.time_unknown, row.timezone) });
  }
  await stage(tx, stageInstants, instants);
  await tx.query(`update events e set starts_at = to_timestamp(s.starts_ms::float8 / 1000),
    ends_at = to_timestamp(s.ends_ms::float8 / 1000) from stage_instants s where e.id = s.id`);
  await tx.query("insert into stage_rewritten (id) select id from stage_instants");
}

/**
 * user_events keeps copies of each event's start, local start, venue and licence (the history's sort
 * key and cursor position, docs/api.md §7, and what visibility and the stats read). An import that
 * rewrites an existing event, or rezones its venue, moves those copies in the same transaction, or a
 * history would sort the event by its old start and the stats count it at its old venue. user_events
 * has no index led by the event (batches would pay for it on every write), so this reads user_events
 * once, joined to the rewritten ids by hash; only imports that rewrote existing events run it.
 */
export async function refreshAttendedCopies(tx: CatalogTransaction): Promise<void> {
  const [rewritten] = await tx.query<{ any: boolean }>(
    "select exists (select 1 from stage_rewritten) as any",
  );
  if (!rewritten?.any) return;
  // Until the commit: batches already writing finish first (their copies are then refreshed here),
  // later ones wait and read the events as committed (see ATTENDANCE_COPIES_LOCK).
  await tx.query(`select pg_advisory_xact_lock(${ATTENDANCE_COPIES_LOCK})`);
  await tx.query(`update user_events ue set starts_at = e.starts_at, starts_at_local = e.starts_at_local,
      venue_id = e.venue_id, licensed = e.licensed
    from (select distinct id from stage_rewritten) r join events e on e.id = r.id
    where ue.event_id = r.id
      and (ue.starts_at, ue.starts_at_local, ue.venue_id, ue.licensed)
        is distinct from (e.starts_at, e.starts_at_local, e.venue_id, e.licensed)`);
}

/**
 * Running servers poll this version to learn that the catalog changed, so an import that changed nothing
 * keeps it (contract §15); every import notes its time.
 */
export async function markImport(tx: CatalogTransaction, changed: boolean): Promise<number> {
  const [state] = await tx.query<{
    version: string | number;
  }>(`insert into catalog_state (id, version, updated_at, imported_at)
    values (1, ${changed ? 1 : 0}, now(), now()) on conflict (id) do update
    set version = catalog_state.version + ${changed ? 1 : 0},
      updated_at = ${changed ? "now()" : "catalog_state.updated_at"}, imported_at = now()
    returning version`);
  return Number(state?.version ?? 0);
}
