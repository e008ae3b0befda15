import { and, count, eq, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { events, userEvents } from "./schema/index.ts";

/**
 * Where a history page ends: the sort key of its last event. Catalog start instants come from local
 * times with whole seconds, so milliseconds hold them exactly.
 */
export type HistoryPosition = { startsAtMs: number; eventId: number };

export type HistoryPage = {
  /** Newest first: start instant, then event id, both descending. */
  eventIds: number[];
  /** The position after which the next page starts; null when this page is the last. */
  next: HistoryPosition | null;
};

/**
 * An event is visible in a user's history when the user keeps media there, has not hidden it, and the
 * catalog may show it. The first two conditions are the predicate of the partial index
 * user_events_history_idx, written as literals (not bound parameters) so that even a generic plan of the
 * prepared statement can prove the index applies. The licence is read with a correlated lookup by
 * primary key rather than a join: a join lets the planner hash the whole events table (tens of ms at
 * catalog scale) where a page needs a few dozen probes.
 */
const visible = (userId: string) =>
  and(
    eq(userEvents.userId, userId),
    sql`${userEvents.mediaCount} > 0`,
    sql`not ${userEvents.hidden}`,
    sql`(select ${events.licensed} from ${events} where ${events.id} = ${userEvents.eventId})`,
  );

/**
 * One page of the history by keyset: the rows strictly after `after` in (starts_at, event_id) descending
 * order. Events matched while a client pages either sort before its position (seen on a later page) or
 * after it (not seen on this pass), never twice. One extra row is read to know whether more follow.
 */
export async function historyPage(
  store: Store,
  userId: string,
  after: HistoryPosition | null,
  limit: number,
): Promise<HistoryPage> {
  const rows = await store.db
    .select({ eventId: userEvents.eventId, startsAt: userEvents.startsAt })
    .from(userEvents)
    .where(
      and(
        visible(userId),
        after === null
          ? undefined
          : sql`(${userEvents.startsAt}, ${userEvents.eventId}) < (${new Date(after.startsAtMs).toISOString()}::timestamptz, ${after.eventId}::int)`,
      ),
    )
    // NULLS LAST as in the index: plain DESC means NULLS FIRST, which the index order does not serve,
    // and the planner would sort every row of the user instead of reading the first page off the index.
    .orderBy(sql`${userEvents.startsAt} desc nulls last`, sql`${userEvents.eventId} desc nulls last`)
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    eventIds: page.map((row) => row.eventId),
    next:
      rows.length > limit && last !== undefined
        ? { startsAtMs: last.startsAt.getTime(), eventId: last.eventId }
        : null,
  };
}

/** How many events the user's history shows in all (the `total` of the first page). */
export async function countVisibleEvents(store: Store, userId: string): Promise<number> {
  const [row] = await store.db.select({ total: count() }).from(userEvents).where(visible(userId));
  return row?.total ?? 0;
}
