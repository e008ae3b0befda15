import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
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
import { againAfterStrayCancel } from "./failures.ts";
import { outsideRequests, RequestAbortedError } from "./requestScope.ts";
import { type Fence, fenced, fromStandbyInTime, type StandbyReads } from "./standbyReads.ts";

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

/** An export open on one server, with the revision of the user's row in its snapshot. */
type Snapshot = UserExport & { revision: number };

/**
 * One read-only REPEATABLE READ transaction on a connection of `client`, so the document is one
 * snapshot however long the client takes to read it, and the items come through a server-side cursor a
 * page at a time: the server holds one page, never the library. The transaction, the partner's slot and
 * the user's row are one round trip. On a standby (`fence` given) the slot is not taken there (the
 * primary's transaction holds it) and the user's row is read behind the fence: none, as for a user the
 * partner does not have, when the standby cannot serve it.
 */
async function snapshotOn(
  client: postgres.Sql,
  partnerId: string,
  userId: string,
  fence: Fence | null,
): Promise<Snapshot | ExportRefusal> {
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
      fence === null ? sent(connection, partnerSlot(partnerId)) : [{ slot: 0 }],
      sent(
        connection,
        userQuery(
          partnerId,
          userId,
          fence === null
            ? sql``
            : fenced({ revision: sql`${fence.revision}`, maxLagSeconds: sql`${fence.maxLagSeconds}` }),
        ),
      ),
    ]);
    const slot = (slots[0] as { slot: number | null } | undefined)?.slot ?? null;
    const row = users[0] as unknown as RawUserRow | undefined;
    if (slot === null || row === undefined) {
      await close();
      return slot === null ? "partner_busy" : "no_such_user";
    }
    return { user: userOf(row), revision: Number(row.revision), pages: cursor.pages, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/**
 * The snapshot, opened once more when its first statements were stopped by a cancel this request did not
 * send: closing an abandoned export cancels its page in PostgreSQL, and a cancel that arrives after that
 * page finished stops whatever its connection runs next, the next export's opening (query_canceled, and
 * its pipelined neighbour's aborted transaction). Nothing was read yet, so opening again is safe.
 */
function openedSnapshot(...args: Parameters<typeof snapshotOn>): ReturnType<typeof snapshotOn> {
  return againAfterStrayCancel(() => snapshotOn(...args));
}

/**
 * On PostgreSQL: the export's snapshot on the primary, which also holds the partner's slot (advisory
 * locks are each server's own, so only the primary's count across instances). With standbys, the
 * document is then read on one that holds the user at the primary's revision (standbyReads.ts), in a
 * snapshot of its own, while the primary's transaction only keeps the slot; otherwise on the primary.
 */
export async function openOnPostgres(
  primary: postgres.Sql,
  standby: StandbyReads | null,
  partnerId: string,
  userId: string,
): Promise<UserExport | ExportRefusal> {
  const opened = await openedSnapshot(primary, partnerId, userId, null);
  if (typeof opened === "string" || standby === null) return opened;
  const client = standby.exportClient();
  if (client === null) {
    standby.count("skipped");
    return opened;
  }
  try {
    const fence = { revision: opened.revision, maxLagSeconds: standby.maxLagSeconds };
    // A snapshot that opens too late is closed as soon as it comes.
    const there = await fromStandbyInTime(openedSnapshot(client, partnerId, userId, fence), (late) => {
      if (typeof late !== "string") void late.close().catch(() => {});
    });
    if (there === "late") {
      standby.count("failed");
      return opened;
    }
    if (typeof there === "string") {
      standby.count("behind");
      return opened;
    }
    standby.count("standby");
    return {
      user: there.user,
      pages: there.pages,
      close: async () => {
        try {
          await there.close();
        } finally {
          await opened.close();
        }
      },
    };
  } catch (error) {
    if (error instanceof RequestAbortedError) {
      await opened.close();
      throw error;
    }
    // Nothing was read yet: the primary's snapshot serves the export instead.
    standby.count("failed");
    return opened;
  }
}
