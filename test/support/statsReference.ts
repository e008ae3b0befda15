import { sql } from "drizzle-orm";
import type { UserStats } from "../../src/flows/stats/readStats.ts";
import type { Store } from "../../src/store/db.ts";

/**
 * The statement that computed the stats in PostgreSQL before the server tallied them from cached
 * catalog facts, kept as the reference the tallies are checked against (test/stats-tallies.test.ts):
 * the catalog read by key in the same snapshot, ties in collate "C".
 */

type StatsRow = {
  has_synced: boolean;
  last_sync_ms: number | null;
  events_count: string | number;
  media_count: string | number;
  photo_count: string | number;
  video_count: string | number;
  venues_count: string | number;
  cities_count: string | number;
  countries_count: string | number;
  performers_count: string | number;
  first_event: UserStats["firstEvent"];
  latest_event: UserStats["latestEvent"];
  top_performers: UserStats["topPerformers"];
  top_venues: UserStats["topVenues"];
  top_cities: UserStats["topCities"];
  events_by_year: UserStats["eventsByYear"];
  categories: UserStats["categories"];
};

/** First or latest event `f` as `{id, name, startsAtLocal}`: its name is the one fact not copied. */
const eventRef = sql`json_build_object(
  'id', f.id, 'name', (select name from events where id = f.id), 'startsAtLocal', f.starts_at_local)`;

/**
 * One statement, so every figure comes from the same snapshot and the whole answer is one round trip.
 * The user's visible events are materialized once from user_events alone (which copies each event's
 * start, local start, venue and licence); venues and performers are tallied by id first and looked up
 * once per distinct id, so the cost follows the user's event count, never the size of the catalog or
 * of the media table. City figures sum the venue tallies (an event has exactly one venue).
 *
 * Catalog rows are fetched by primary key through LATERAL subqueries with `offset 0`, which PostgreSQL
 * never flattens into joins: a join would be planned from the average user's row count, and once the
 * average user has a few thousand events it becomes full scans of the catalog even for a user with ten.
 * Names that tie compare in code-point order (collate "C"), whatever the database locale.
 *
 * The statement is the user lookup too: its one row is the partner's user row, so a user the partner
 * does not have yields no row, and none of the figures is computed.
 */
function referenceStatsQuery(partnerId: string, userId: string, top: number) {
  return sql`
    with visible as materialized (
      select event_id as id, starts_at, starts_at_local, venue_id, media_count, photo_count, video_count
      from user_events
      where user_id = ${userId} and media_count > 0 and not hidden and licensed
    ),
    venue_tally as materialized (
      select t.venue_id as id, t.n, ven.name, ven.city, ven.region, ven.country
      from (select venue_id, count(*) as n from visible group by venue_id) t
      cross join lateral (
        select name, city, region, country from venues where id = t.venue_id offset 0
      ) ven
    ),
    billing as materialized (
      select v.id as event_id, ep.performer_id
      from visible v
      cross join lateral (select performer_id from event_performers where event_id = v.id offset 0) ep
    ),
    performer_tally as materialized (
      select t.performer_id as id, t.n, p.name, p.category, p.image_url
      from (select performer_id, count(*) as n from billing group by performer_id) t
      cross join lateral (
        select name, category, image_url from performers where id = t.performer_id offset 0
      ) p
    ),
    city_tally as materialized (
      select city, region, country, sum(n) as n
      from venue_tally where city is not null
      group by city, region, country
    )
    select
      u.has_synced,
      floor(extract(epoch from u.last_sync_at) * 1000)::float8 as last_sync_ms,
      (select count(*) from visible) as events_count,
      (select coalesce(sum(media_count), 0) from visible) as media_count,
      (select coalesce(sum(photo_count), 0) from visible) as photo_count,
      (select coalesce(sum(video_count), 0) from visible) as video_count,
      (select count(*) from venue_tally) as venues_count,
      (select count(*) from city_tally) as cities_count,
      (select count(distinct country) from venue_tally) as countries_count,
      (select count(*) from performer_tally) as performers_count,
      (select ${eventRef} from (select id, starts_at_local from visible order by starts_at, id limit 1) f)
        as first_event,
      (select ${eventRef}
         from (select id, starts_at_local from visible order by starts_at desc, id desc limit 1) f)
        as latest_event,
      (select coalesce(json_agg(json_build_object(
                'id', id, 'name', name, 'category', category, 'imageUrl', image_url, 'eventsCount', n)
              order by n desc, id), '[]')
         from (select * from performer_tally order by n desc, id limit ${top}) t) as top_performers,
      (select coalesce(json_agg(json_build_object(
                'id', id, 'name', name, 'city', city, 'region', region, 'country', country, 'eventsCount', n)
              order by n desc, id), '[]')
         from (select * from venue_tally order by n desc, id limit ${top}) t) as top_venues,
      (select coalesce(json_agg(json_build_object(
                'city', city, 'region', region, 'country', country, 'eventsCount', n)
              order by n desc, city collate "C", region collate "C" nulls first, country collate "C" nulls first),
              '[]')
         from (select * from city_tally
               order by n desc, city collate "C", region collate "C" nulls first, country collate "C" nulls first
               limit ${top}) t) as top_cities,
      (select coalesce(json_agg(json_build_object('year', year, 'eventsCount', n) order by year), '[]')
         from (select substr(starts_at_local, 1, 4)::int as year, count(*) as n
               from visible group by 1) t) as events_by_year,
      (select coalesce(json_agg(json_build_object('category', category, 'eventsCount', n)
              order by n desc, category collate "C"), '[]')
         from (select p.category, count(distinct b.event_id) as n
               from billing b join performer_tally p on p.id = b.performer_id
               where p.category is not null group by p.category) t) as categories
    from users u
    where u.id = ${userId} and u.partner_id = ${partnerId}
  `;
}

/** The reference's answer for the user, or null when the partner has no such user. */
export async function referenceStats(
  store: Store,
  owner: { partnerId: string; userId: string },
  top: number,
): Promise<UserStats | null> {
  const [row] = await store.rows<StatsRow>(referenceStatsQuery(owner.partnerId, owner.userId, top));
  if (!row) return null;
  return {
    hasSynced: row.has_synced,
    lastSyncAt: row.last_sync_ms === null ? null : new Date(row.last_sync_ms),
    eventsCount: Number(row.events_count),
    mediaCount: Number(row.media_count),
    photoCount: Number(row.photo_count),
    videoCount: Number(row.video_count),
    venuesCount: Number(row.venues_count),
    citiesCount: Number(row.cities_count),
    countriesCount: Number(row.countries_count),
    performersCount: Number(row.performers_count),
    firstEvent: row.first_event,
    latestEvent: row.latest_event,
    topPerformers: row.top_performers,
    topVenues: row.top_venues,
    topCities: row.top_cities,
    eventsByYear: row.events_by_year,
    categories: row.categories,
  };
}
