import { sql } from "drizzle-orm";
import type { IndexEvent, IndexVenue } from "../../src/shards/matcher.ts";
import type { Store } from "../../src/store/db.ts";

/**
 * The slice of the real catalog that traffic is drawn from: events (sorted by start) and their venues,
 * in the engine's own shapes, so a test can check generated items against the reference matcher.
 */
export type CatalogSample = {
  venues: IndexVenue[];
  /** Sorted by startsAtMs ascending. */
  events: IndexEvent[];
};

type SampleRow = {
  id: number;
  venue_id: number;
  starts_at: Date | string;
  ends_at: Date | string | null;
  licensed: boolean;
  latitude: number;
  longitude: number;
  radius_m: number | null;
};

/**
 * Reads about `size` events picked pseudo-randomly but repeatably (the same seed and catalog give the same
 * sample): a 2M-event catalog is sampled by Bernoulli blocks instead of being read whole into memory.
 */
export async function readCatalogSample(store: Store, size: number, seed: number): Promise<CatalogSample> {
  const [count] = await store.rows<{ n: number }>(sql`select count(*)::int as n from events`);
  const total = count?.n ?? 0;
  if (total === 0) throw new Error("the catalog is empty: import one before generating traffic");
  const percent = Math.min(100, (100 * size) / total);
  const rows = await store.rows<SampleRow>(sql`
    select e.id, e.venue_id, e.starts_at, e.ends_at, e.licensed, v.latitude, v.longitude, v.radius_m
    from events e tablesample bernoulli (${sql.raw(percent.toFixed(6))}) repeatable (${seed})
    join venues v on v.id = e.venue_id
    order by e.starts_at, e.id`);
  return sampleOf(rows);
}

function sampleOf(rows: readonly SampleRow[]): CatalogSample {
  const venues = new Map<number, IndexVenue>();
  const events: IndexEvent[] = [];
  for (const row of rows) {
    venues.set(row.venue_id, {
      id: row.venue_id,
      latitude: row.latitude,
      longitude: row.longitude,
      radiusM: row.radius_m,
    });
    events.push({
      id: row.id,
      venueId: row.venue_id,
      startsAtMs: new Date(row.starts_at).getTime(),
      endsAtMs: row.ends_at === null ? null : new Date(row.ends_at).getTime(),
      licensed: row.licensed,
    });
  }
  return { venues: [...venues.values()], events };
}
