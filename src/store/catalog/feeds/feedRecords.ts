import { eventInstants } from "../eventWindow.ts";
import { parseLocalDateTime } from "../localTime.ts";
import type { CatalogTransaction } from "../transaction.ts";
import type { FeedEvent, FeedNotice, FeedPage, FeedPerformer, FeedSource, FeedVenue } from "./feedPage.ts";
import { linkedShow, type ShowFacts } from "./linking.ts";
import { datedEvents } from "./undatedEvents.ts";

/**
 * Turns read answer pages into catalog records (docs/operations.md §3) inside the import's transaction,
 * under its lock: each (source, kind, external id) gets its stable integer id (`external_ids`, new ones
 * from the `feed_ids` sequence), a new event the linking rule matches to an existing show takes that
 * show's id and is not written, and the rest become JSON Lines for the catalog importer, which validates
 * and merges them as it does a catalog file.
 */

export type FeedRecords = {
  lines: string[];
  /** The place in the operator's files of each line, for reporting a line the importer rejects. */
  places: string[];
  /** Events of this import matched to a show of another source, and not written. */
  linked: number;
  /** Events named without a date that the catalog does not hold, with their places. */
  skipped: FeedNotice[];
};

type Kind = "venue" | "performer" | "event";
type Mapping = { id: number; linked: boolean };
type MappingRow = { kind: Kind; external_id: string; id: number; linked: boolean };

/** A value as an SQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const mapKey = (kind: Kind, key: string) => `${kind}\u0000${key}`;

async function knownMappings(
  tx: CatalogTransaction,
  source: FeedSource,
  keys: readonly { kind: Kind; external_id: string }[],
): Promise<Map<string, Mapping>> {
  const rows = await tx.query<MappingRow>(
    `select x.kind, x.external_id, x.id, x.linked from external_ids x
     join json_to_recordset(${literal(JSON.stringify(keys))}) as k(kind text, external_id text)
       on k.kind = x.kind and k.external_id = x.external_id
     where x.source = ${literal(source)}`,
  );
  return new Map(rows.map((r) => [mapKey(r.kind, r.external_id), { id: r.id, linked: r.linked }]));
}

type Candidate = ShowFacts & { key: string; id: number };

const DAY_MS = 86_400_000;
function shiftedDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Existing events of other sources on the incoming events' local dates (and the days either side). */
async function linkCandidates(
  tx: CatalogTransaction,
  source: FeedSource,
  events: readonly FeedEvent[],
): Promise<Map<string, Candidate[]>> {
  const days = events.flatMap((e) =>
    [-1, 0, 1].map((shift) => ({ key: e.key, day: shiftedDate(e.startsAtLocal.slice(0, 10), shift) })),
  );
  const rows = await tx.query<{
    key: string;
    id: number;
    name: string;
    starts_at_local: string;
    time_unknown: boolean;
    starts_ms: number;
    latitude: number;
    longitude: number;
    performers: string[];
  }>(`select f.key, e.id, e.name, e.starts_at_local, e.time_unknown,
      floor(date_part('epoch', e.starts_at) * 1000)::float8 as starts_ms, v.latitude, v.longitude,
      (select coalesce(json_agg(p.name), '[]') from event_performers ep
         join performers p on p.id = ep.performer_id where ep.event_id = e.id) as performers
    from json_to_recordset(${literal(JSON.stringify(days))}) as f(key text, day text)
    join events e on left(e.starts_at_local, 10) = f.day
    join venues v on v.id = e.venue_id
    where e.id not in (select id from external_ids where source = ${literal(source)} and kind = 'event')`);
  const byKey = new Map<string, Candidate[]>();
  for (const row of rows) {
    const candidate: Candidate = {
      key: row.key,
      id: row.id,
      name: row.name,
      latitude: row.latitude,
      longitude: row.longitude,
      startsMs: Number(row.starts_ms),
      localDate: row.starts_at_local.slice(0, 10),
      timeUnknown: row.time_unknown,
      performerNames: row.performers,
    };
    const list = byKey.get(row.key);
    if (list === undefined) byKey.set(row.key, [candidate]);
    else list.push(candidate);
  }
  return byKey;
}

function showOf(event: FeedEvent, venue: FeedVenue, performers: Map<string, FeedPerformer>): ShowFacts {
  const starts = parseLocalDateTime(event.startsAtLocal);
  return {
    name: event.name,
    latitude: venue.latitude,
    longitude: venue.longitude,
    startsMs: starts === null ? 0 : eventInstants(starts, null, event.timeUnknown, venue.timezone).startsMs,
    localDate: event.startsAtLocal.slice(0, 10),
    timeUnknown: event.timeUnknown,
    performerNames: event.performers.flatMap((p) => performers.get(p.key)?.name ?? []),
  };
}

/** Gives new ids (`feed_ids`) to the keys that have none, and records links. */
async function recordMappings(
  tx: CatalogTransaction,
  source: FeedSource,
  fresh: readonly { kind: Kind; external_id: string }[],
  links: readonly { external_id: string; id: number }[],
  into: Map<string, Mapping>,
): Promise<void> {
  if (fresh.length > 0) {
    const rows = await tx.query<MappingRow>(
      `insert into external_ids (source, kind, external_id, id)
       select ${literal(source)}, k.kind, k.external_id, nextval('feed_ids')
       from json_to_recordset(${literal(JSON.stringify(fresh))}) as k(kind text, external_id text)
       returning kind, external_id, id, linked`,
    );
    for (const r of rows) into.set(mapKey(r.kind, r.external_id), { id: r.id, linked: false });
  }
  if (links.length > 0) {
    await tx.query(
      `insert into external_ids (source, kind, external_id, id, linked)
       select ${literal(source)}, 'event', k.external_id, k.id, true
       from json_to_recordset(${literal(JSON.stringify(links))}) as k(external_id text, id integer)`,
    );
    for (const link of links) into.set(mapKey("event", link.external_id), { id: link.id, linked: true });
  }
}

/** Last one wins, as in a catalog file: a later page holds the fresher answer. */
function byKey<T extends { key: string }>(items: Iterable<T>): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) map.set(item.key, item);
  return map;
}

export async function feedRecords(
  tx: CatalogTransaction,
  source: FeedSource,
  pages: readonly FeedPage[],
): Promise<FeedRecords> {
  const venues = byKey(pages.flatMap((p) => p.venues));
  const performers = byKey(pages.flatMap((p) => p.performers));
  const named = byKey(pages.flatMap((p) => [...p.events, ...p.undated]));
  const keys = [
    ...[...venues.keys()].map((k) => ({ kind: "venue" as const, external_id: k })),
    ...[...performers.keys()].map((k) => ({ kind: "performer" as const, external_id: k })),
    ...[...named.keys()].map((k) => ({ kind: "event" as const, external_id: k })),
  ];
  const mappings = await knownMappings(tx, source, keys);
  const storedIds = new Map(
    [...named.keys()].flatMap((k) => {
      const mapping = mappings.get(mapKey("event", k));
      return mapping === undefined ? [] : [[k, mapping.id] as const];
    }),
  );
  const { events, skipped } = await datedEvents(tx, named, storedIds);
  const unseen = [...events.values()].filter((e) => !mappings.has(mapKey("event", e.key)));
  const candidates: Map<string, Candidate[]> =
    unseen.length === 0 ? new Map() : await linkCandidates(tx, source, unseen);
  const links: { external_id: string; id: number }[] = [];
  const taken = new Set<number>();
  for (const event of unseen) {
    const venue = venues.get(event.venueKey);
    const options = (candidates.get(event.key) ?? []).filter((c) => !taken.has(c.id));
    const show = venue === undefined ? null : linkedShow(showOf(event, venue, performers), options);
    if (show === null) continue;
    taken.add(show.id);
    links.push({ external_id: event.key, id: show.id });
  }
  const linkedKeys = new Set(links.map((l) => l.external_id));
  const fresh = keys.filter(
    (k) =>
      !mappings.has(mapKey(k.kind, k.external_id)) &&
      !(k.kind === "event" && (linkedKeys.has(k.external_id) || !events.has(k.external_id))),
  );
  await recordMappings(tx, source, fresh, links, mappings);
  return { ...recordsOf(venues, performers, events, mappings, links.length), skipped };
}

function recordsOf(
  venues: Map<string, FeedVenue>,
  performers: Map<string, FeedPerformer>,
  events: Map<string, FeedEvent>,
  mappings: Map<string, Mapping>,
  linked: number,
): Omit<FeedRecords, "skipped"> {
  const idOf = (kind: Kind, key: string) => mappings.get(mapKey(kind, key)) ?? { id: 0, linked: false };
  const records = { lines: [] as string[], places: [] as string[], linked };
  const add = (record: object, place: string) => {
    records.lines.push(JSON.stringify(record));
    records.places.push(place);
  };
  for (const v of venues.values()) {
    const { key, ...fields } = v;
    add({ type: "venue", id: idOf("venue", key).id, ...fields }, `venue ${key}`);
  }
  for (const p of performers.values()) {
    add(
      {
        type: "performer",
        id: idOf("performer", p.key).id,
        name: p.name,
        category: p.category,
        image_url: p.imageUrl,
      },
      `performer ${p.key}`,
    );
  }
  for (const e of events.values()) {
    const mapping = idOf("event", e.key);
    if (mapping.linked) continue;
    // A provider may bill one attraction twice; the catalog lists a performer once per event.
    const billed = byKey(e.performers);
    add(
      {
        type: "event",
        id: mapping.id,
        name: e.name,
        venue_id: idOf("venue", e.venueKey).id,
        starts_at_local: e.startsAtLocal,
        ends_at_local: e.endsAtLocal,
        status: e.status,
        time_unknown: e.timeUnknown,
        performers: [...billed.values()].map((p) => ({
          id: idOf("performer", p.key).id,
          is_headliner: p.isHeadliner,
        })),
      },
      e.place,
    );
  }
  return records;
}
