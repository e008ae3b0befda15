import { sql } from "drizzle-orm";
import type postgres from "postgres";
import { matchableCondition } from "../store/catalog/eventStatus.ts";
import type { Store } from "../store/db.ts";
import { inTransaction } from "../store/reservedConnections.ts";
import { type CatalogColumns, columnsFromArrays, emptyColumns } from "./columns.ts";
import type { IndexEvent, IndexVenue } from "./matcher.ts";

/** Where a generation's catalog comes from: the database in production, arrays in tests and benchmarks. */
export type CatalogSource = {
  /** catalog_state.version (row id = 1) as text; "0" before the first import. */
  version(): Promise<string>;
  /** The whole catalog, with the version it was read at (one snapshot). */
  load(): Promise<{ version: string; columns: CatalogColumns }>;
};

/** Rows per round trip when streaming; a few MB of row objects at a time, whatever the catalog size. */
const CURSOR_ROWS = 20_000;

const VERSION = sql`select coalesce((select version::text from catalog_state where id = 1), '0') as version`;
const COUNTS = `select coalesce((select version::text from catalog_state where id = 1), '0') as version,
  (select count(*) from venues)::int as venues,
  (select count(*) from events e where ${matchableCondition("e")})::int as events`;
const VENUES = "select id, latitude, longitude, radius_m from venues";
// Instants as whole epoch milliseconds, as a JS Date would hold them. `date_part` answers in float8,
// where `extract` computes in numeric, much slower over a whole catalog; it is exact here because the
// catalog's times are whole seconds (`…THH:MM:SS`), and whole seconds times 1000 are exact in float8
// below 2^53.
const EVENTS = `select id, venue_id, floor(date_part('epoch', starts_at) * 1000) as starts,
  floor(date_part('epoch', ends_at) * 1000) as ends, licensed from events e where ${matchableCondition("e")}`;

type VenueRow = { id: number; latitude: number; longitude: number; radius_m: number | null };
type EventRow = { id: number; venue_id: number; starts: number; ends: number | null; licensed: boolean };
type Counts = { version: string; venues: number; events: number };

function putVenue(columns: CatalogColumns, i: number, row: VenueRow): void {
  columns.venueIds[i] = row.id;
  columns.venueLatitudes[i] = row.latitude;
  columns.venueLongitudes[i] = row.longitude;
  columns.venueRadii[i] = row.radius_m ?? Number.NaN;
}

function putEvent(columns: CatalogColumns, i: number, row: EventRow): void {
  columns.eventIds[i] = row.id;
  columns.eventVenueIds[i] = row.venue_id;
  columns.eventStarts[i] = row.starts;
  columns.eventEnds[i] = row.ends ?? Number.NaN;
  columns.eventLicensed[i] = row.licensed ? 1 : 0;
}

/**
 * Events in id order after `$1`, at most `$2` of them, packed by PostgreSQL into one bytea of
 * fixed-size records, each the binary send form of its fields, big-endian: id int4 (offset 0), venue_id
 * int4 (4), start float8 (8), end float8 (16, NaN for none), licensed bool (24): 25 bytes. Decoding a
 * record is five reads at fixed offsets; as rows, each event cost the server's thread an object and five
 * parsed texts, several times the CPU of the packed form, taken from the requests it serves while a
 * reload runs. Records carry their own id, so the order inside the bytea is irrelevant.
 */
const PACKED_EVENTS = `select string_agg(int4send(id) || int4send(venue_id) || float8send(starts)
    || float8send(coalesce(ends, 'NaN')) || boolsend(licensed), ''::bytea) as packed,
  max(id) as last_id, count(*)::int as count
  from (${EVENTS} and id > $1 order by id limit $2) as e`;
const PACKED_RECORD_BYTES = 25;
/** Events per packed chunk: 12.5 MB of records, twice that as the hex text the driver receives. */
const PACKED_CHUNK_EVENTS = 500_000;

type PackedChunk = { packed: Buffer | null; last_id: number | null; count: number };

function putPackedEvents(columns: CatalogColumns, first: number, packed: Buffer): number {
  let i = first;
  for (let at = 0; at + PACKED_RECORD_BYTES <= packed.length; at += PACKED_RECORD_BYTES, i++) {
    columns.eventIds[i] = packed.readInt32BE(at);
    columns.eventVenueIds[i] = packed.readInt32BE(at + 4);
    columns.eventStarts[i] = packed.readDoubleBE(at + 8);
    columns.eventEnds[i] = packed.readDoubleBE(at + 16);
    columns.eventLicensed[i] = packed.readUInt8(at + 24);
  }
  return i;
}

/**
 * Reads the catalog inside one repeatable-read transaction, so counts, rows and version agree even
 * while an import commits: venues through a cursor (a few thousand), events in packed chunks by id.
 */
async function loadFromPostgres(
  client: postgres.Sql,
  chunkEvents: number,
): Promise<{ version: string; columns: CatalogColumns }> {
  return inTransaction(
    client,
    async (tx) => {
      const [counts] = await tx.unsafe<Counts[]>(COUNTS);
      if (counts === undefined) throw new Error("catalog counts query returned no row");
      const columns = emptyColumns(counts.venues, counts.events);
      let venues = 0;
      await tx.unsafe<VenueRow[]>(VENUES).cursor(CURSOR_ROWS, (rows) => {
        for (const row of rows) putVenue(columns, venues++, row);
      });
      let events = 0;
      let afterId = 0; // catalog ids start at 1 (src/store/catalog/records.ts)
      while (events < counts.events) {
        const [chunk] = await tx.unsafe<PackedChunk[]>(PACKED_EVENTS, [afterId, chunkEvents]);
        if (chunk?.packed == null || chunk.last_id === null || events + chunk.count > counts.events) break;
        events = putPackedEvents(columns, events, chunk.packed);
        afterId = chunk.last_id;
      }
      if (events !== counts.events) {
        throw new Error(`read ${events} of the ${counts.events} events the catalog's snapshot counts`);
      }
      return { version: counts.version, columns };
    },
    "isolation level repeatable read read only",
  );
}

/** PGlite is embedded and small-scale: plain selects in one transaction. */
async function loadFromPglite(store: Store): Promise<{ version: string; columns: CatalogColumns }> {
  return store.transaction(async (tx) => {
    const [counts] = await tx.rows<Counts>(sql.raw(COUNTS));
    const venues = await tx.rows<VenueRow>(sql.raw(VENUES));
    const events = await tx.rows<EventRow>(sql.raw(EVENTS));
    const columns = emptyColumns(venues.length, events.length);
    venues.forEach((row, i) => {
      putVenue(columns, i, row);
    });
    events.forEach((row, i) => {
      putEvent(columns, i, row);
    });
    return { version: counts?.version ?? "0", columns };
  });
}

/** `chunkEvents`: events per packed read on PostgreSQL (tests make it small to cross chunk edges). */
export function storeCatalogSource(store: Store, chunkEvents = PACKED_CHUNK_EVENTS): CatalogSource {
  return {
    async version() {
      const [row] = await store.rows<{ version: string }>(VERSION);
      return row?.version ?? "0";
    },
    load: () => (store.client === null ? loadFromPglite(store) : loadFromPostgres(store.client, chunkEvents)),
  };
}

/**
 * A catalog held in memory (tests, benchmarks). `replace` swaps the catalog and moves the version on,
 * as an import does in the database. Columns are rebuilt per load because a build consumes them.
 */
export function arrayCatalogSource(venues: readonly IndexVenue[], events: readonly IndexEvent[]) {
  let current = { venues, events, version: 1 };
  return {
    version: async () => String(current.version),
    load: async () => ({
      version: String(current.version),
      columns: columnsFromArrays(current.venues, current.events),
    }),
    replace(nextVenues: readonly IndexVenue[], nextEvents: readonly IndexEvent[]): void {
      current = { venues: nextVenues, events: nextEvents, version: current.version + 1 };
    },
  } satisfies CatalogSource & { replace(venues: readonly IndexVenue[], events: readonly IndexEvent[]): void };
}
