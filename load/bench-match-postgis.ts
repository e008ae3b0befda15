import postgres from "postgres";
import type { CatalogColumns } from "../src/shards/columns.ts";
import type { Candidate, MatchQuery, MatchSettings } from "../src/shards/matcher.ts";

/**
 * The baseline the engine is measured against: the same catalog in PostgreSQL + PostGIS, one row per
 * event carrying its venue's point, radius and match window, a GiST index on (geography, window), and
 * one query per batch that picks each capture's best candidate by time distance, then venue distance, then event id (not the score of docs/api.md §5).
 */

const MINUTE_MS = 60_000;
/** Largest radius the catalog allows: the index probe uses it, the exact radius filters after. */
const MAX_RADIUS_M = 5000;
const COPY_CHUNK = 50_000;

export type PostgisBaseline = {
  loadSeconds: number;
  match(batch: readonly MatchQuery[]): Promise<(Candidate | null)[]>;
  close(): Promise<void>;
};

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function copyRaw(sql: postgres.Sql, columns: CatalogColumns, settings: MatchSettings): Promise<void> {
  const venueOf = new Map<number, number>();
  columns.venueIds.forEach((id, i) => {
    venueOf.set(id, i);
  });
  const stream =
    await sql`copy raw_events (id, venue_id, lat, lng, radius, starts, ends, licensed) from stdin`.writable();
  const write = (chunk: string) =>
    new Promise<void>((resolve, reject) =>
      stream.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
  const total = columns.eventIds.length;
  for (let first = 0; first < total; first += COPY_CHUNK) {
    const lines: string[] = [];
    for (let e = first; e < Math.min(total, first + COPY_CHUNK); e++) {
      const v = venueOf.get(columns.eventVenueIds[e] ?? 0) ?? 0;
      const radius = columns.venueRadii[v] ?? Number.NaN;
      const start = columns.eventStarts[e] ?? 0;
      const endsAt = columns.eventEnds[e] ?? Number.NaN;
      const end = Number.isNaN(endsAt) ? start + settings.defaultDurationMinutes * MINUTE_MS : endsAt;
      lines.push(
        `${columns.eventIds[e]}\t${columns.eventVenueIds[e]}\t${columns.venueLatitudes[v]}\t${columns.venueLongitudes[v]}\t${Number.isNaN(radius) ? settings.radiusM : radius}\t${start}\t${end}\t${columns.eventLicensed[e] === 1 ? "t" : "f"}\n`,
      );
    }
    await write(lines.join(""));
  }
  await new Promise<void>((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

/** Creates a scratch database, loads the catalog with COPY and indexes it. */
export async function loadPostgis(
  adminUrl: string,
  columns: CatalogColumns,
  settings: MatchSettings,
): Promise<PostgisBaseline> {
  const name = `rollcall_bench_match_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name}`);
  await admin.unsafe(`create database ${name}`);
  const sql = postgres(withDatabase(adminUrl, name), { max: 4, onnotice: () => {} });
  const started = performance.now();
  await sql`create extension postgis`;
  await sql`create unlogged table raw_events (id int, venue_id int, lat float8, lng float8, radius float8,
    starts float8, ends float8, licensed bool)`;
  await copyRaw(sql, columns, settings);
  const beforeMs = settings.beforeMinutes * MINUTE_MS;
  const afterMs = settings.afterMinutes * MINUTE_MS;
  await sql.unsafe(`create table bench_events as select id, venue_id, radius, starts, ends, licensed,
      st_setsrid(st_makepoint(lng, lat), 4326)::geography as geog,
      tstzrange(to_timestamp((starts - ${beforeMs}) / 1000.0), to_timestamp((ends + ${afterMs}) / 1000.0), '[]') as win
    from raw_events`);
  await sql`drop table raw_events`;
  await sql`create index bench_events_geog_win on bench_events using gist (geog, win)`;
  await sql`analyze bench_events`;
  const loadSeconds = (performance.now() - started) / 1000;

  return {
    loadSeconds,
    async match(batch) {
      const rows = await sql<
        { i: string; id: number | null; venue_id: number | null; licensed: boolean | null }[]
      >`
        select q.i, m.id, m.venue_id, m.licensed
        from unnest(${sql.array(batch.map((x) => x.latitude))}::float8[],
                    ${sql.array(batch.map((x) => x.longitude))}::float8[],
                    ${sql.array(batch.map((x) => x.takenAtMs))}::float8[]) with ordinality as q(lat, lng, t, i)
        left join lateral (
          select e.id, e.venue_id, e.licensed
          from bench_events e,
               lateral (select st_setsrid(st_makepoint(q.lng, q.lat), 4326)::geography as p) point
          where st_dwithin(e.geog, point.p, ${MAX_RADIUS_M}, false)
            and e.win @> to_timestamp(q.t / 1000.0)
            and st_distance(e.geog, point.p, false) <= e.radius
          order by greatest(e.starts - q.t, q.t - e.ends, 0), st_distance(e.geog, point.p, false), e.id
          limit 1
        ) m on true
        order by q.i`;
      return rows.map((row) =>
        row.id === null
          ? null
          : { eventId: row.id, venueId: row.venue_id ?? 0, licensed: row.licensed === true },
      );
    },
    async close() {
      await sql.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
