import type { CatalogTransaction } from "./transaction.ts";

/**
 * What an import corrects (contract §15): it notes where each existing event and venue it touches stood
 * before, and at the end queues every event whose placement changed (start, end, venue, status, whether
 * its time is known, or its venue's place, reach or zone) and every event it added, for a running server
 * to place their kept items again (src/flows/corrections). Licensing is not a correction: it only moves an
 * event in or out of histories (§12), which the attended copies already follow.
 */

export const CORRECTION_DDL = [
  `create temp table stage_placed (id integer primary key, starts_at timestamptz, ends_at timestamptz,
    venue_id integer, status text, time_unknown boolean) on commit drop`,
  "create temp table stage_added (id integer primary key) on commit drop",
  `create temp table stage_venue_placed (id integer primary key, latitude float8, longitude float8,
    radius_m integer, timezone text) on commit drop`,
];

/**
 * A part of the statement that rewrites events (`rewritten`: the ids it rewrote) noting where they stood
 * before: every part of a statement reads the snapshot from before it, so `events` still holds the old
 * rows. Only rewritten events are noted, so an unchanged re-import notes nothing; an event met again in a
 * later chunk keeps its first note, the state before the import.
 */
export function notedPlacements(rewritten: string): string {
  return `placed as (insert into stage_placed
    select e.id, e.starts_at, e.ends_at, e.venue_id, e.status, e.time_unknown
    from ${rewritten} w cross join lateral (select * from events where id = w.id offset 0) e
    on conflict (id) do nothing)`;
}

/** Notes the staged chunk's new events; called once `stage_events.existing` is set. */
export async function noteAddedEvents(tx: CatalogTransaction): Promise<void> {
  await tx.query(
    "insert into stage_added select id from stage_events where not existing on conflict (id) do nothing",
  );
}

/** Notes where the staged venues stand now; called after staging them and before the upsert. */
export async function noteVenuePlacements(tx: CatalogTransaction): Promise<void> {
  await tx.query(`insert into stage_venue_placed
    select v.id, v.latitude, v.longitude, v.radius_m, v.timezone from venues v
    where v.id in (select id from stage_venues)
    on conflict (id) do nothing`);
}

/**
 * Queues the corrected and added events at `version`; an event already queued takes the newer version
 * and a fresh lease. Nothing is queued while no item is kept anywhere (a first load): there is nothing
 * to place again. Returns how many events were corrected (added ones not counted).
 */
export async function queueCorrections(tx: CatalogTransaction, version: number): Promise<number> {
  const [counts] = await tx.query<{ corrected: number }>(`with corrected as (
      select p.id from stage_placed p join events e on e.id = p.id
      where (p.starts_at, p.ends_at, p.venue_id, p.status, p.time_unknown)
        is distinct from (e.starts_at, e.ends_at, e.venue_id, e.status, e.time_unknown)
      union
      select e.id from events e
      where e.venue_id in (select p.id from stage_venue_placed p join venues v on v.id = p.id
        where (p.latitude, p.longitude, p.radius_m, p.timezone)
          is distinct from (v.latitude, v.longitude, v.radius_m, v.timezone))
    ),
    queued as (
      insert into catalog_corrections (event_id, version)
      select id, ${version} from (select id from corrected union select id from stage_added) q
      where exists (select 1 from media)
      on conflict (event_id) do update set version = excluded.version, leased_until = null
    )
    select count(*)::int as corrected from corrected`);
  return counts?.corrected ?? 0;
}
