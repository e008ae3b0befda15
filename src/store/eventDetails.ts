import { type SQL, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { type BoundStatement, renderedOnce } from "./renderedStatement.ts";

export type VenueDetail = {
  id: number;
  name: string;
  city: string | null;
  region: string | null;
  country: string | null;
  latitude: number;
  longitude: number;
};

/** A performer as the catalog has it, whatever the event. */
export type PerformerFacts = { id: number; name: string; category: string | null; imageUrl: string | null };

/** A performer as an event bills it. */
export type PerformerDetail = PerformerFacts & { isHeadliner: boolean | null };

/** An event's catalog facts: what every user's history shows of it alike. */
export type EventFacts = {
  id: number;
  name: string;
  startsAtLocal: string;
  /** The date is known and the time is not: `startsAtLocal` is the date at 00:00:00. */
  timeUnknown: boolean;
  venue: VenueDetail;
  performers: PerformerDetail[];
};

/** What one user kept at an event: the history row's count and, when asked for, the stored list. */
export type AttendedEvent = {
  eventId: number;
  mediaCount: number;
  /** The user's attendance confidence in hundredths (docs/api.md §15); null until computed. */
  confidence: number | null;
  /** Every item kept there as wire-format JSON (see `mediaListJson`); null when media were not asked for. */
  mediaJson: string | null;
};

/**
 * The catalog's version (catalog_state, bumped by every import that changes the catalog, in its transaction) as a statement reads
 * it, so facts cached from one version are never served for a page read from another.
 */
export const catalogVersion = sql`coalesce((select version::text from catalog_state where id = 1), '0')`;

/** An event's own row and billing: its facts once its venue and performers are looked up. */
type EventCore = {
  id: number;
  name: string;
  startsAtLocal: string;
  timeUnknown: boolean;
  venueId: number;
  /** Headliners first, then the catalog's billing order; the performer id settles anything left. */
  billing: { performerId: number; isHeadliner: boolean | null }[];
};

/** `readEventCores`'s statement (exported for test/store-plans-catalog.test.ts, which reads its plan). */
export const eventCores = renderedOnce(
  ["eventIds"],
  ({ eventIds }) => sql`
    select ${catalogVersion} as catalog_version, e.id, e.name, e.starts_at_local, e.time_unknown, e.venue_id,
      (select coalesce(json_agg(json_build_array(ep.performer_id, ep.is_headliner)
                order by coalesce(ep.is_headliner, false) desc, ep.position, ep.performer_id), '[]')
         from event_performers ep where ep.event_id = e.id) as billing
    from unnest(${eventIds}::int[]) as r(id)
    -- offset 0: one key probe per id, where a join would scan a mid-sized catalog for a page of ids
    left join lateral (select id, name, starts_at_local, time_unknown, venue_id from events where id = r.id offset 0) e on true`,
);

/**
 * The rows and billing of those of `eventIds` that exist (in no particular order), with the catalog
 * version they were read at, in one statement (one row per id asked for, so the version comes back
 * even when none exists). Venues and performers are left to the server, which keeps them (few, and
 * shared by many events): with them looked up by key and each event's JSON built here, the statement
 * took markedly longer (docs/performance.md §7).
 */
export async function readEventCores(
  store: Store,
  eventIds: readonly number[],
): Promise<{ catalogVersion: string; cores: EventCore[] }> {
  const rows = await store.read<{
    catalog_version: string;
    id: number | null;
    name: string;
    starts_at_local: string;
    time_unknown: boolean;
    venue_id: number;
    billing: [number, boolean | null][];
  }>(eventCores({ eventIds }));
  return {
    catalogVersion: rows[0]?.catalog_version ?? "0",
    cores: rows.flatMap((row) =>
      row.id === null
        ? []
        : [
            {
              id: row.id,
              name: row.name,
              startsAtLocal: row.starts_at_local,
              timeUnknown: row.time_unknown,
              venueId: row.venue_id,
              billing: row.billing.map(([performerId, isHeadliner]) => ({ performerId, isHeadliner })),
            },
          ],
    ),
  };
}

const venuesAndPerformers = renderedOnce(
  ["venueIds", "performerIds"],
  ({ venueIds, performerIds }) => sql`
    select ${catalogVersion} as catalog_version,
      (select coalesce(json_agg(json_build_object(
                'id', id, 'name', name, 'city', city, 'region', region, 'country', country,
                'latitude', latitude, 'longitude', longitude)), '[]')
         from venues where id = any(${venueIds}::int[])) as venues,
      (select coalesce(json_agg(json_build_object(
                'id', id, 'name', name, 'category', category, 'imageUrl', image_url)), '[]')
         from performers where id = any(${performerIds}::int[])) as performers`,
);

/**
 * The venues and performers of those ids that exist, with the catalog version they were read at, in
 * one statement (each table read by its primary key for the whole list at once).
 */
export async function readVenuesAndPerformers(
  store: Store,
  venueIds: readonly number[],
  performerIds: readonly number[],
): Promise<{ catalogVersion: string; venues: VenueDetail[]; performers: PerformerFacts[] }> {
  const [row] = await store.read<{
    catalog_version: string;
    venues: VenueDetail[];
    performers: PerformerFacts[];
  }>(venuesAndPerformers({ venueIds, performerIds }));
  return {
    catalogVersion: row?.catalog_version ?? "0",
    venues: row?.venues ?? [],
    performers: row?.performers ?? [],
  };
}

/**
 * One kept item as the API shows it (docs/api.md §4): `{media_id, taken_at, media_type[, thumbnail_url]}`
 * as JSON text, from the media row `m`. Built by concatenation, not json_build_object: lists are stored
 * (`user_event_media`), and the function's `" : "` separators would make every item a sixth longer.
 * Strings go through to_json, which escapes them as JSON requires; media_type is one of two constrained
 * words and needs no escaping. `taken_at` is the UTC wall time with its microseconds cut to milliseconds
 * (to_char's MS truncates): docs/api.md §1's `2026-11-21T08:41:00.000Z`, years within 1900..9999.
 * drizzle/0006_user_event_media.sql writes the same text for databases from before stored lists.
 */
export function storedItemJson(m: SQL): SQL {
  return sql`('{"media_id":' || to_json(${m}.media_id)::text
    || ',"taken_at":"' || to_char(${m}.taken_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","media_type":"' || ${m}.media_type || '"'
    || coalesce(',"thumbnail_url":' || to_json(${m}.thumbnail_url)::text, '')
    || '}')`;
}

/**
 * The media list of one history row as the API shows it (docs/api.md §4, §7): the items' JSON
 * (`storedItemJson`) as an array, oldest capture first, the id breaking ties in code-point order
 * (collate "C") whatever the database's collation, so two databases never answer in different orders.
 * `items` is a relation with the columns item_json, taken_at and media_id.
 */
export function mediaListJson(items: SQL): SQL {
  return sql`(
    select coalesce('[' || string_agg(i.item_json, ',' order by i.taken_at, i.media_id collate "C") || ']', '[]')
    from ${items} as i)`;
}

/**
 * `mediaListJson` as an aggregate over the items `i` of a group (one event's), for a statement that
 * renders several events' lists in one pass; null for a group without items.
 */
export function mediaListAggregate(i: SQL): SQL {
  return sql`'[' || string_agg(${storedItemJson(i)}, ',' order by ${i}.taken_at, ${i}.media_id collate "C") || ']'`;
}

/** The user's rendered list at an event, by primary key; null for an event the user kept nothing at. */
export function storedMediaList(userId: string | SQL, eventId: SQL): SQL {
  return sql`(select media_json from user_event_media where user_id = ${userId}::uuid and event_id = ${eventId})`;
}

/** A row of a statement that reads attended events (`attendedEventsQuery`, the history page). */
export type AttendedRow = {
  event_id: number | null;
  media_count: number | null;
  confidence: number | null;
  media_json: string | null;
  catalog_version: string;
  /** The event's time is unknown (`events.time_unknown`): read by the batch answer only. */
  time_unknown?: boolean | null;
};

const attendedEvents = renderedOnce(
  ["userId", "eventIds"],
  ({ userId, eventIds }) => sql`
    select r.id as event_id, ue.media_count, ue.confidence,
           ${storedMediaList(userId, sql`r.id`)} as media_json, ${catalogVersion} as catalog_version,
           (select time_unknown from events where id = r.id) as time_unknown
    from unnest(${eventIds}::int[]) with ordinality as r(id, ord)
    left join lateral (
      select media_count, confidence from user_events where user_id = ${userId}::uuid and event_id = r.id
    ) ue on true
    order by r.ord`,
);

/**
 * What the user kept at each of `eventIds`, in their order, with the catalog version: the batch
 * response's events, read in the batch's transaction after its writes. Rows go through `attendedOf`.
 */
export function attendedEventsQuery(userId: string, eventIds: readonly number[]): BoundStatement {
  return attendedEvents({ userId, eventIds });
}

/**
 * The attended events of rows in their order; the one row of a history page with nothing to show has no
 * event and gives none. With media asked for, a row without a stored list is an empty list.
 */
export function attendedOf(rows: readonly AttendedRow[], includeMedia: boolean): AttendedEvent[] {
  return rows.flatMap((row) =>
    row.event_id === null
      ? []
      : [
          {
            eventId: row.event_id,
            mediaCount: row.media_count ?? 0,
            confidence: row.confidence,
            mediaJson: includeMedia ? (row.media_json ?? "[]") : null,
          },
        ],
  );
}
