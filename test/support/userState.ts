import { sql } from "drizzle-orm";
import type { Store } from "../../src/store/db.ts";

/** Everything a user's batches change, read whole: the sync state, the kept items, the history rows. */
export type UserState = {
  user: { last_sync_at: string | null; has_synced: boolean; received_since_sync: boolean };
  media: ({ media_id: string } & Record<string, unknown>)[];
  events: {
    event_id: number;
    media_count: number;
    photo_count: number;
    video_count: number;
    hidden: boolean;
    confidence: number | null;
    media_json: string | null;
  }[];
  /** The routine spots' tallies; a tally fallen to zero counts as none (it stays until a rebuild). */
  spots: Record<string, unknown>[];
};

export async function userState(store: Store, userId: string): Promise<UserState> {
  const [user] = await store.rows<UserState["user"]>(
    sql`select to_char(last_sync_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as last_sync_at,
          has_synced, received_since_sync from users where id = ${userId}::uuid`,
  );
  if (user === undefined) throw new Error(`no user ${userId}`);
  const media = await store.rows<UserState["media"][number]>(
    sql`select media_id, event_id, venue_id, (extract(epoch from taken_at) * 1000000)::int8::text as taken_at,
          latitude, longitude, media_type, filename, duration_seconds, thumbnail_url, device_make,
          device_model, device_lens_model, spot_row, spot_col, in_core, weight
        from media where user_id = ${userId}::uuid order by media_id collate "C"`,
  );
  const events = await store.rows<UserState["events"][number]>(
    sql`select ue.event_id, ue.media_count, ue.photo_count, ue.video_count, ue.hidden, ue.confidence,
          uem.media_json
        from user_events ue
        left join user_event_media uem on uem.user_id = ue.user_id and uem.event_id = ue.event_id
        where ue.user_id = ${userId}::uuid order by ue.event_id`,
  );
  const spots = await store.rows<Record<string, unknown>>(
    sql`select venue_id, spot_row, spot_col, event_id, items, core_items from user_venue_spots
        where user_id = ${userId}::uuid and items > 0 order by venue_id, spot_row, spot_col, event_id`,
  );
  return { user, media, events, spots };
}

/**
 * Every row, in every table of the service's schema as the database's own catalog lists them (so a
 * table a later migration adds is looked at too), whose text holds the id anywhere: in any column, a
 * JSON document included. Returned as `table: row text`.
 */
export async function rowsHolding(store: Store, id: string): Promise<string[]> {
  const tables = await store.rows<{ name: string }>(
    sql`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p') and n.nspname = current_schema() order by c.relname`,
  );
  const found: string[] = [];
  for (const { name } of tables) {
    const rows = await store.rows<{ row: string }>(
      sql`select t::text as row from ${sql.identifier(name)} t where strpos(lower(t::text), ${id.toLowerCase()}) > 0`,
    );
    found.push(...rows.map((r) => `${name}: ${r.row}`));
  }
  return found;
}
