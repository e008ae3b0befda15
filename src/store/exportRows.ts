import { type SQL, sql } from "drizzle-orm";
import { currentScope } from "./requestScope.ts";
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
export const EXPORT_PAGE_ROWS = 100;

export const instant = (column: SQL, fraction: "MS" | "US") =>
  sql`to_char(${column} at time zone 'UTC', ${`YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"`})`;

/** The user's row; `condition` adds to its lookup (a standby's fence, exportOnPostgres.ts). */
export const userQuery = (partnerId: string, userId: string, condition: SQL = sql``): SQL => sql`
  select u.id as user_id, u.email, u.partner_user_id, u.first_name, u.last_name, u.phone_number,
         u.address::text as address, ${instant(sql`u.created_at`, "MS")} as created_at, u.has_synced,
         ${instant(sql`u.last_sync_at`, "MS")} as last_sync_at,
         array(select e.event_id from user_events e where e.user_id = u.id and e.hidden order by e.event_id)
           as hidden_event_ids,
         u.revision
  from users u where u.id = ${userId}::uuid and u.partner_id = ${partnerId} ${condition}`;

/** Oldest capture first, the id (in code-point order) breaking ties: a total order, so pages can resume. */
export const mediaQuery = (userId: string, after: SQL): SQL => sql`
  select m.media_id, ${instant(sql`m.taken_at`, "MS")} as taken_at,
         ${instant(sql`m.taken_at`, "US")} as taken_at_key, m.latitude, m.longitude, m.media_type,
         m.filename, m.duration_seconds, m.thumbnail_url, m.device_make, m.device_model,
         m.device_lens_model, m.event_id, m.venue_id
  from media m where m.user_id = ${userId}::uuid ${after}
  order by m.taken_at, m.media_id collate "C"`;

/** The row as read: the address as JSON text, and the revision a standby's copy is compared with. */
export type RawUserRow = Omit<ExportedUserRow, "address"> & {
  address: string | null;
  revision: string | number;
};

export const userOf = ({ revision: _, ...row }: RawUserRow): ExportedUserRow => ({
  ...row,
  address: row.address === null ? null : (JSON.parse(row.address) as UserAddress),
});

/**
 * `end` run once, whoever asks first: the reader, when it finishes or goes away, or the request's scope,
 * when the request ends early (requestScope.ts `hold`). Returns what the reader calls.
 */
export function heldForRequest(end: () => Promise<void>): () => Promise<void> {
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
