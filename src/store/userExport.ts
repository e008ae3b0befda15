import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { openOnPostgres } from "./exportOnPostgres.ts";
import {
  EXPORT_PAGE_ROWS,
  EXPORTS_PER_PARTNER,
  type ExportedMediaRow,
  type ExportRefusal,
  heldForRequest,
  mediaQuery,
  type RawUserRow,
  type UserExport,
  userOf,
  userQuery,
} from "./exportRows.ts";

export {
  EXPORTS_PER_PARTNER,
  type ExportedMediaRow,
  type ExportedUserRow,
  type ExportRefusal,
  type UserExport,
} from "./exportRows.ts";

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
    : openOnPostgres(store.exportClient, store.standby, partnerId, userId);
}
