import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { seedKeptItems } from "../load/seed/keptItems.ts";
import { keptUsers } from "../load/target/users.ts";
import { readCatalogSample } from "../load/traffic/sample.ts";
import { parseConfig } from "../src/config.ts";
import { haversineMeters } from "../src/shards/geo.ts";
import { Random } from "../src/store/catalog/generate/random.ts";
import { backfillConfidence } from "../src/store/confidenceBackfill.ts";
import { seedCatalog } from "./support/catalogFixtures.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const KEPT = 1_500;
const settings = parseConfig({}).match;

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("acme")).sandbox;
  const random = new Random(3);
  const venues = Array.from({ length: 30 }, (_, i) => ({
    id: i + 1,
    latitude: 48.85 + random.float() * 0.2,
    longitude: 2.3 + random.float() * 0.2,
    radiusM: i % 2 === 0 ? null : 250,
    timezone: "Europe/Paris",
  }));
  const events = Array.from({ length: 400 }, (_, i) => ({
    id: i + 1,
    venueId: (i % 30) + 1,
    startsAtLocal: `20${20 + (i % 6)}-0${1 + (i % 9)}-1${i % 10}T20:00:00`,
    endsAtLocal: i % 3 === 0 ? `20${20 + (i % 6)}-0${1 + (i % 9)}-1${i % 10}T23:00:00` : null,
    licensed: i % 10 !== 0,
  }));
  await seedCatalog(server, { venues, events });
  const sample = await readCatalogSample(server.store, 1_000, 1);
  await seedKeptItems(server.store, sample, { keptItems: KEPT, partnerId: "acme", seed: 9, settings });
});

afterAll(() => server.close());

describe("data-scale seeding", () => {
  test("writes exactly the kept items, for synced users of the partner, at licensed events", async () => {
    const [row] = await server.store.rows<{
      media: number;
      users: number;
      unsynced: number;
      unlicensed: number;
    }>(sql`
      select (select count(*)::int from media) as media,
             (select count(*)::int from users where partner_id = 'acme') as users,
             (select count(*)::int from users where not has_synced or last_sync_at is null) as unsynced,
             (select count(*)::int from media m join events e on e.id = m.event_id where not e.licensed) as unlicensed`);
    expect(row).toEqual({
      media: KEPT,
      users: (await keptUsers(server.store, "acme")).length,
      unsynced: 0,
      unlicensed: 0,
    });
  });

  test("user_events counts and start instants agree with the media rows", async () => {
    const mismatches = await server.store.rows(sql`
      with actual as (
        select user_id, event_id, count(*)::int as media_count,
               count(*) filter (where media_type = 'photo')::int as photo_count,
               count(*) filter (where media_type = 'video')::int as video_count
        from media group by user_id, event_id
      )
      select * from actual a
      full join user_events ue using (user_id, event_id)
      left join events e on e.id = coalesce(a.event_id, ue.event_id)
      where a.media_count is distinct from ue.media_count or a.photo_count is distinct from ue.photo_count
         or a.video_count is distinct from ue.video_count or ue.starts_at is distinct from e.starts_at`);
    expect(mismatches).toEqual([]);
  });

  test("every kept item lies inside its venue's radius and its event's match window", async () => {
    const rows = await server.store.rows<{
      latitude: number;
      longitude: number;
      venue_latitude: number;
      venue_longitude: number;
      radius_m: number | null;
      in_window: boolean;
      same_venue: boolean;
    }>(sql`
      select m.latitude, m.longitude, v.latitude as venue_latitude, v.longitude as venue_longitude, v.radius_m,
             m.venue_id = e.venue_id as same_venue,
             m.taken_at between e.starts_at - make_interval(mins => ${settings.beforeMinutes})
               and coalesce(e.ends_at, e.starts_at + make_interval(mins => ${settings.defaultDurationMinutes}))
                   + make_interval(mins => ${settings.afterMinutes}) as in_window
      from media m join events e on e.id = m.event_id join venues v on v.id = e.venue_id`);
    expect(rows.length).toBe(KEPT);
    for (const row of rows) {
      const distance = haversineMeters(row.latitude, row.longitude, row.venue_latitude, row.venue_longitude);
      expect(distance).toBeLessThanOrEqual(row.radius_m ?? settings.radiusM);
      expect(row.in_window && row.same_venue).toBe(true);
    }
  });

  test("the API serves the seeded history and stats", async () => {
    const [user] = await keptUsers(server.store, "acme");
    if (!user) throw new Error("no kept user");
    const [expected] = await server.store.rows<{ events: number; media: number }>(
      sql`select count(*)::int as events, sum(media_count)::int as media from user_events where user_id = ${user.id}`,
    );
    const history = await server.call("GET", `/v1/users/${user.id}/events?limit=100`, { key });
    expect(history.status).toBe(200);
    expect(history.body.total).toBe(expected?.events);
    const media = (history.body.events as { media: unknown[] }[]).reduce(
      (sum, event) => sum + event.media.length,
      0,
    );
    expect(media).toBe(expected?.media ?? -1);
    const stats = await server.call("GET", `/v1/users/${user.id}/stats`, { key });
    expect(stats.status).toBe(200);
    expect(stats.body.media_count).toBe(expected?.media);
    expect(stats.body.has_synced).toBe(true);
  });

  test("weights, spots and confidences are what the backfill computes from the stored items", async () => {
    const snapshot = () =>
      server.store.rows(sql`
        select 'media' as kind, user_id::text, media_id as id, weight::text as value,
               concat_ws(',', spot_row, spot_col, in_core) as more
        from media
        union all
        select 'history', user_id::text, event_id::text, confidence::text, null from user_events
        union all
        select 'spot', user_id::text, concat_ws(',', venue_id, spot_row, spot_col, event_id), items::text,
               core_items::text
        from user_venue_spots
        order by 1, 2, 3`);
    const seeded = await snapshot();
    const [gaps] = await server.store.rows<{
      items: number;
      rows: number;
      spots: number;
      cells: number;
      core: number;
      outside: number;
    }>(sql`
      select (select count(*)::int from media where weight is null) as items,
             (select count(*)::int from user_events where confidence is null) as rows,
             (select count(*)::int from user_venue_spots) as spots,
             (select count(*)::int from media where spot_row is null or in_core is null) as cells,
             (select coalesce(sum(core_items), 0)::int from user_venue_spots) as core,
             (select coalesce(sum(items - core_items), 0)::int from user_venue_spots) as outside`);
    expect(gaps?.items).toBe(0);
    expect(gaps?.rows).toBe(0);
    // Every seeded item has its cell, and some lie in a venue's core and some outside it.
    expect(gaps?.spots).toBeGreaterThan(0);
    expect(gaps?.cells).toBe(0);
    expect(gaps?.core).toBeGreaterThan(0);
    expect(gaps?.outside).toBeGreaterThan(0);
    // Every item placed again from what is stored, every spot row and confidence rebuilt.
    const counts = await backfillConfidence(server.store, settings, { replace: true });
    expect(counts.items).toBe(KEPT);
    expect(await snapshot()).toEqual(seeded);
  });
});
