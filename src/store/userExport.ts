import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import type { Store } from "./db.ts";
import type { UserAddress } from "./schema/index.ts";

/**
 * The user's profile and sync state as stored, instants as text: milliseconds as every answer gives
 * them (docs/api.md §1), so the drivers' own date handling never enters.
 */
export type ExportedUserRow = {
  user_id: string;
  email: string;
  partner_user_id: string | null;
  first_name: string | null;
  last_name: string | null;
  phone_number: string | null;
  address: UserAddress | null;
  created_at: string;
  has_synced: boolean;
  last_sync_at: string | null;
  hidden_event_ids: number[];
};

/** A kept item with every member as stored; `taken_at` to the microsecond, as the database keeps it. */
export type ExportedMediaRow = {
  media_id: string;
  taken_at: string;
  latitude: number;
  longitude: number;
  media_type: "photo" | "video";
  filename: string | null;
  duration_seconds: number | null;
  thumbnail_url: string | null;
  device_make: string | null;
  device_model: string | null;
  device_lens_model: string | null;
  event_id: number;
  venue_id: number;
};

/** An export under way: the user, then the kept items a page at a time; `close` ends it either way. */
export type UserExport = {
  user: ExportedUserRow;
  pages(): AsyncGenerator<ExportedMediaRow[]>;
  close(): Promise<void>;
};

/**
 * Kept items per page: about 36 KB of JSON. Pages of 1,000 items (360 KB texts and buffers) left the
 * server's resident memory higher after each export; at this size it settles (docs/performance.md §10).
 */
const EXPORT_PAGE_ROWS = 100;

const instant = (column: SQL, fraction: "MS" | "US") =>
  sql`to_char(${column} at time zone 'UTC', ${`YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"`})`;

const userQuery = (partnerId: string, userId: string): SQL => sql`
  select u.id as user_id, u.email, u.partner_user_id, u.first_name, u.last_name, u.phone_number,
         u.address::text as address, ${instant(sql`u.created_at`, "MS")} as created_at, u.has_synced,
         ${instant(sql`u.last_sync_at`, "MS")} as last_sync_at,
         array(select e.event_id from user_events e where e.user_id = u.id and e.hidden order by e.event_id)
           as hidden_event_ids
  from users u where u.id = ${userId}::uuid and u.partner_id = ${partnerId}`;

/** Oldest capture first, the id (in code-point order) breaking ties: a total order, so pages can resume. */
const mediaQuery = (userId: string, after: SQL): SQL => sql`
  select m.media_id, ${instant(sql`m.taken_at`, "US")} as taken_at, m.latitude, m.longitude, m.media_type,
         m.filename, m.duration_seconds, m.thumbnail_url, m.device_make, m.device_model,
         m.device_lens_model, m.event_id, m.venue_id
  from media m where m.user_id = ${userId}::uuid ${after}
  order by m.taken_at, m.media_id collate "C"`;

type RawUserRow = Omit<ExportedUserRow, "address"> & { address: string | null };

const userOf = (row: RawUserRow): ExportedUserRow => ({
  ...row,
  address: row.address === null ? null : (JSON.parse(row.address) as UserAddress),
});

const dialect = new PgDialect();

const sent = (connection: postgres.ReservedSql, query: SQL) => {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return connection.unsafe(text, params as never[]);
};

/**
 * On PostgreSQL: one read-only REPEATABLE READ transaction on a connection of its own, so the document
 * is one snapshot however long the client takes to read it, and the items come through a server-side
 * cursor a page at a time: the server holds one page, never the library.
 */
async function openOnPostgres(client: postgres.Sql, partnerId: string, userId: string) {
  const connection = await client.reserve();
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    try {
      await connection.unsafe("rollback");
    } finally {
      connection.release();
    }
  };
  try {
    await connection.unsafe("begin isolation level repeatable read read only");
    const [row] = (await sent(connection, userQuery(partnerId, userId))) as unknown as RawUserRow[];
    if (row === undefined) {
      await close();
      return null;
    }
    async function* pages(): AsyncGenerator<ExportedMediaRow[]> {
      for await (const rows of sent(connection, mediaQuery(userId, sql``)).cursor(EXPORT_PAGE_ROWS)) {
        yield rows as unknown as ExportedMediaRow[];
      }
    }
    return { user: userOf(row), pages, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/**
 * On the embedded database, which has one connection for everything, no transaction is held open while
 * a client reads: pages are read one statement each, each resuming after the last item of the one before.
 */
async function openOnPglite(store: Store, partnerId: string, userId: string) {
  const [row] = await store.rows<RawUserRow>(userQuery(partnerId, userId));
  if (row === undefined) return null;
  async function* pages(): AsyncGenerator<ExportedMediaRow[]> {
    let after = sql``;
    for (;;) {
      const rows = await store.rows<ExportedMediaRow>(
        sql`${mediaQuery(userId, after)} limit ${EXPORT_PAGE_ROWS}`,
      );
      if (rows.length > 0) yield rows;
      const last = rows.at(-1);
      if (last === undefined || rows.length < EXPORT_PAGE_ROWS) return;
      after = sql`and (m.taken_at, m.media_id collate "C") > (${last.taken_at}::timestamptz, ${last.media_id} collate "C")`;
    }
  }
  return { user: userOf(row), pages, close: async () => {} };
}

/**
 * Everything stored for the partner's user (docs/api.md §16), or null when the partner has no such user.
 * The caller must `close` what it gets, whether or not it read every page.
 */
export async function openUserExport(
  store: Store,
  partnerId: string,
  userId: string,
): Promise<UserExport | null> {
  return store.client === null
    ? openOnPglite(store, partnerId, userId)
    : openOnPostgres(store.client, partnerId, userId);
}
