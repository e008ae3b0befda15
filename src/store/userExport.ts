import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import type { Store } from "./db.ts";
import { currentScope, outsideRequests } from "./requestScope.ts";
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

/**
 * A kept item with every member as stored; `taken_at` to the millisecond as every answer gives it
 * (docs/api.md §1), and `taken_at_key` to the microsecond the database keeps, which is where the next
 * page starts: two items a few microseconds apart must not share a page boundary.
 */
export type ExportedMediaRow = {
  media_id: string;
  taken_at: string;
  taken_at_key: string;
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

/**
 * An export under way: the user, then the kept items a page at a time; `close` ends it either way and
 * is safe to call more than once. An export opened for a request is also closed when the request ends
 * early (requestScope.ts).
 */
export type UserExport = {
  user: ExportedUserRow;
  pages(): AsyncGenerator<ExportedMediaRow[]>;
  close(): Promise<void>;
};

/** Why an export did not open: no such user of the partner, or the partner's exports all running. */
export type ExportRefusal = "no_such_user" | "partner_busy";

/** docs/api.md §16: exports one partner may run at once, across every instance and thread. */
export const EXPORTS_PER_PARTNER = 2;

/**
 * Kept items per page, so a page's texts and buffers stay small: much larger pages left the server's
 * resident memory higher after each export; at this size it settles (docs/performance.md §10).
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
  select m.media_id, ${instant(sql`m.taken_at`, "MS")} as taken_at,
         ${instant(sql`m.taken_at`, "US")} as taken_at_key, m.latitude, m.longitude, m.media_type,
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

/** Advisory-lock class of the partners' export slots (the key within it is the partner's id and slot). */
const EXPORT_SLOT_LOCK = 7_265_004;

/**
 * Takes one of the partner's export slots for the transaction, or none (null) when every one is
 * held: a lock per slot, tried in order, that PostgreSQL lets go of when the transaction ends, however
 * it ends, so a slot can never outlive its export.
 */
const partnerSlot = (partnerId: string): SQL =>
  sql`select case ${sql.join(
    Array.from(
      { length: EXPORTS_PER_PARTNER },
      (_, i) =>
        sql`when pg_try_advisory_xact_lock(${EXPORT_SLOT_LOCK}, hashtext(${`${partnerId}/${i + 1}`})) then ${i + 1}`,
    ),
    sql` `,
  )} end as slot`;

/**
 * The kept items a page at a time through a server-side cursor. Closing cancels a page still being
 * read (the only statement that can be under way: a table locked by an operator would hold it), so
 * that the cursor, then the transaction, can end; a cursor merely waiting for its reader is left alone.
 */
function cursorPages(start: () => ReturnType<typeof sent>) {
  let query: ReturnType<typeof sent> | null = null;
  let reading: Promise<unknown> | null = null;
  let generator: AsyncGenerator<ExportedMediaRow[]> | null = null;
  async function* pages(): AsyncGenerator<ExportedMediaRow[]> {
    query = start();
    const iterator = query.cursor(EXPORT_PAGE_ROWS)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = iterator.next();
        reading = next;
        const page = await next.finally(() => {
          reading = null;
        });
        if (page.done === true) return;
        yield page.value as unknown as ExportedMediaRow[];
      }
    } finally {
      await iterator.return?.();
    }
  }
  return {
    pages: () => {
      generator ??= pages();
      return generator;
    },
    async close(): Promise<void> {
      if (reading !== null) {
        query?.cancel();
        await reading.catch(() => {});
      }
      await generator?.return(undefined);
    },
  };
}

/**
 * `end` run once, whoever asks first: the reader, when it finishes or goes away, or the request's scope,
 * when the request ends early (requestScope.ts `hold`). Returns what the reader calls.
 */
function heldForRequest(end: () => Promise<void>): () => Promise<void> {
  let ending: Promise<void> | null = null;
  const once = () => {
    ending ??= end();
    return ending;
  };
  const released = currentScope()?.hold(once);
  return async () => {
    await once();
    released?.();
  };
}

/**
 * On PostgreSQL: one read-only REPEATABLE READ transaction on a connection of the export pool, so the
 * document is one snapshot however long the client takes to read it, and the items come through a
 * server-side cursor a page at a time: the server holds one page, never the library. The transaction,
 * the partner's slot and the user's row are one round trip.
 */
async function openOnPostgres(
  client: postgres.Sql,
  partnerId: string,
  userId: string,
): Promise<UserExport | ExportRefusal> {
  const connection = await client.reserve();
  // The cursor is not the request's statement: its close decides whether to cancel it (cursorPages).
  const cursor = cursorPages(() => outsideRequests(() => sent(connection, mediaQuery(userId, sql``))));
  let close: () => Promise<void>;
  try {
    close = heldForRequest(async () => {
      try {
        await cursor.close();
        // Also after the request ended early, when its own statements are refused.
        await outsideRequests(() => connection.unsafe("rollback"));
      } finally {
        connection.release();
      }
    });
  } catch (error) {
    connection.release();
    throw error;
  }
  try {
    const [, slots, users] = await Promise.all([
      connection.unsafe("begin isolation level repeatable read read only"),
      sent(connection, partnerSlot(partnerId)),
      sent(connection, userQuery(partnerId, userId)),
    ]);
    const slot = (slots[0] as { slot: number | null } | undefined)?.slot ?? null;
    const row = users[0] as unknown as RawUserRow | undefined;
    if (slot === null || row === undefined) {
      await close();
      return slot === null ? "partner_busy" : "no_such_user";
    }
    return { user: userOf(row), pages: cursor.pages, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** Exports running per partner on each embedded database (one process holds it, so memory counts them all). */
const embeddedExports = new WeakMap<Store, Map<string, number>>();

/**
 * On the embedded database, which has one connection for everything, no transaction is held open while
 * a client reads: pages are read one statement each, each resuming after the last item of the one before.
 */
async function openOnPglite(
  store: Store,
  partnerId: string,
  userId: string,
): Promise<UserExport | ExportRefusal> {
  const running = embeddedExports.get(store) ?? new Map<string, number>();
  embeddedExports.set(store, running);
  if ((running.get(partnerId) ?? 0) >= EXPORTS_PER_PARTNER) return "partner_busy";
  // Counted before the first await, so two exports starting together cannot both take the last slot.
  running.set(partnerId, (running.get(partnerId) ?? 0) + 1);
  let generator: AsyncGenerator<ExportedMediaRow[]> | null = null;
  const end = async () => {
    try {
      await generator?.return(undefined);
    } finally {
      running.set(partnerId, (running.get(partnerId) ?? 1) - 1);
    }
  };
  let close: () => Promise<void>;
  try {
    close = heldForRequest(end);
  } catch (error) {
    await end();
    throw error;
  }
  const [row] = await store.rows<RawUserRow>(userQuery(partnerId, userId)).catch(async (error) => {
    await close();
    throw error;
  });
  if (row === undefined) {
    await close();
    return "no_such_user";
  }
  async function* pages(): AsyncGenerator<ExportedMediaRow[]> {
    let after = sql``;
    for (;;) {
      const rows = await store.rows<ExportedMediaRow>(
        sql`${mediaQuery(userId, after)} limit ${EXPORT_PAGE_ROWS}`,
      );
      if (rows.length > 0) yield rows;
      const last = rows.at(-1);
      if (last === undefined || rows.length < EXPORT_PAGE_ROWS) return;
      after = sql`and (m.taken_at, m.media_id collate "C") > (${last.taken_at_key}::timestamptz, ${last.media_id} collate "C")`;
    }
  }
  return {
    user: userOf(row),
    pages: () => {
      generator ??= pages();
      return generator;
    },
    close,
  };
}

/**
 * Everything stored for the partner's user (docs/api.md §16), or why not. The caller must `close` what
 * it gets, whether or not it read every page.
 */
export async function openUserExport(
  store: Store,
  partnerId: string,
  userId: string,
): Promise<UserExport | ExportRefusal> {
  return store.exportClient === null
    ? openOnPglite(store, partnerId, userId)
    : openOnPostgres(store.exportClient, partnerId, userId);
}
