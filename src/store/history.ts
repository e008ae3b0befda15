import { type SQL, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import {
  type AttendedEvent,
  type AttendedRow,
  attendedOf,
  catalogVersion,
  storedMediaList,
} from "./eventDetails.ts";
import { type BoundStatement, renderedOnce, type Slots } from "./renderedStatement.ts";
import { type Fence, fenced } from "./standbyReads.ts";

/**
 * Where a history page ends: the sort key of its last event. Catalog start instants come from local
 * times with whole seconds, so milliseconds hold them exactly.
 */
export type HistoryPosition = { startsAtMs: number; eventId: number };

export type HistoryPage = {
  /** Newest first: start instant, then event id, both descending. */
  events: AttendedEvent[];
  /** The catalog version the page was read at: the facts to show with it (see `readEventFacts`). */
  catalogVersion: string;
  /** The position after which the next page starts; null when this page is the last. */
  next: HistoryPosition | null;
  /** How many events the history shows in all; counted on the first page only, null after it. */
  total: number | null;
};

/**
 * An event is visible in a user's history when the user keeps media there, has not hidden it, and the
 * catalog may show it (user_events copies the licence). The three conditions are the predicate of the
 * partial index user_events_history_idx, written as literals (not bound parameters) so that even a
 * generic plan of the prepared statement can prove the index applies.
 */
const visible = (userId: SQL) => sql`
  ue.user_id = ${userId}::uuid and ue.media_count > 0 and not ue.hidden and ue.licensed`;

/** The user a page is asked for, and the partner asking: another partner's user is no user at all. */
export type HistoryOwner = { partnerId: string; userId: string };

export type PageOptions = {
  limit: number;
  includeMedia: boolean;
  /** Leave out events below this confidence, in hundredths (docs/api.md §15); 0 leaves out nothing. */
  minConfidence: number;
};

/** A row of the page statement; the one row of a user with nothing on the page has a null event. */
type PageRow = AttendedRow & {
  starts_at_ms: number;
  has_more: boolean;
  total: string | number | null;
};

/** The values of a page statement, one slot each (`renderedOnce`). */
type PageSlot =
  | "userId"
  | "partnerId"
  | "limit"
  | "readLimit"
  | "minConfidence"
  | "afterStartsAt"
  | "afterEventId"
  | "revision"
  | "maxLagSeconds";
const PAGE_SLOTS: readonly PageSlot[] = [
  "userId",
  "partnerId",
  "limit",
  "readLimit",
  "minConfidence",
  "afterStartsAt",
  "afterEventId",
  "revision",
  "maxLagSeconds",
];

/**
 * What changes a page statement's text: whether it follows a cursor, filters, carries media, and runs on
 * a standby behind a fence (standbyReads.ts).
 */
type PageShape = { follows: boolean; filters: boolean; includeMedia: boolean; onStandby: boolean };

/**
 * One page in one statement: the keyset read, each event's media count and, when asked, its stored
 * media list (`user_event_media`), whether more follow, on the first page the total, and the catalog
 * version, all from one snapshot. The events' catalog facts are the caller's to add (the server keeps
 * them cached by catalog version). `page` reads one row past the limit to know whether more follow;
 * only the rows shown are expanded. NULLS LAST as in the index: plain DESC means NULLS FIRST, which the
 * index order does not serve, and the planner would sort every row of the user instead of reading the
 * page off the index.
 *
 * The statement is the user lookup too: its rows hang off the partner's user row by a left join, so a
 * user the partner does not have yields no row at all, and one with nothing to show yields a single row
 * with a null event. That saves a round trip before every page.
 */
function pageStatement({ follows, filters, includeMedia, onStandby }: PageShape, s: Slots<PageSlot>): SQL {
  const userId = s.userId;
  // Without a threshold the statement carries no confidence predicate at all: the default page keeps
  // the plan it had before confidence existed. Null (not yet computed) is below every threshold.
  const atLeast = filters ? sql`and ue.confidence >= ${s.minConfidence}::int` : sql``;
  const position = follows
    ? sql`and (ue.starts_at, ue.event_id) < (${s.afterStartsAt}::timestamptz, ${s.afterEventId}::int)`
    : sql``;
  const total = follows
    ? sql`null::int8`
    : sql`(select count(*) from user_events ue where ${visible(userId)} ${atLeast})`;
  return sql`
    with page as materialized (
      select ue.event_id, ue.starts_at, ue.media_count, ue.confidence from user_events ue
      where ${visible(userId)} ${atLeast} ${position}
      order by ue.starts_at desc nulls last, ue.event_id desc nulls last
      limit ${s.readLimit}::int
    ),
    shown as (
      select event_id, starts_at, media_count, confidence from page
      order by starts_at desc, event_id desc limit ${s.limit}::int
    )
    select s.event_id, extract(epoch from s.starts_at)::float8 * 1000 as starts_at_ms,
           s.media_count, s.confidence, ${catalogVersion} as catalog_version,
           ${includeMedia ? storedMediaList(userId, sql`s.event_id`) : sql`null::text`} as media_json,
           (select count(*) from page) > ${s.limit}::int as has_more,
           ${total} as total
    from users u
    left join shown s on true
    where u.id = ${userId}::uuid and u.partner_id = ${s.partnerId} ${onStandby ? fenced(s) : sql``}
    order by s.starts_at desc, s.event_id desc`;
}

/**
 * The sixteen page statements, each rendered to text once, since rendering one per page costs server CPU
 * on every page (docs/performance.md §11); a statement leaves out the slots its shape does not use.
 */
const pageStatements = new Map(
  [false, true].flatMap((onStandby) =>
    [false, true].flatMap((follows) =>
      [false, true].flatMap((filters) =>
        [false, true].map((includeMedia) => {
          const shape = { follows, filters, includeMedia, onStandby };
          return [shapeKey(shape), renderedOnce(PAGE_SLOTS, (slots) => pageStatement(shape, slots))] as const;
        }),
      ),
    ),
  ),
);

function shapeKey({ follows, filters, includeMedia, onStandby }: PageShape): number {
  return (onStandby ? 8 : 0) + (follows ? 4 : 0) + (filters ? 2 : 0) + (includeMedia ? 1 : 0);
}

function pageQuery(
  owner: HistoryOwner,
  after: HistoryPosition | null,
  options: PageOptions,
  fence: Fence | null,
): BoundStatement {
  const { limit, includeMedia, minConfidence } = options;
  const bind = pageStatements.get(
    shapeKey({
      follows: after !== null,
      filters: minConfidence > 0,
      includeMedia,
      onStandby: fence !== null,
    }),
  );
  if (bind === undefined) throw new Error("no page statement for this shape");
  return bind({
    ...owner,
    limit,
    readLimit: limit + 1,
    minConfidence,
    afterStartsAt: after === null ? null : new Date(after.startsAtMs).toISOString(),
    afterEventId: after?.eventId ?? null,
    revision: fence?.revision ?? null,
    maxLagSeconds: fence?.maxLagSeconds ?? null,
  });
}

/**
 * One page of the history by keyset, or null when the partner has no such user: the events strictly
 * after `after` in (starts_at, event_id) descending order. Events matched while a client pages either
 * sort before its position (seen on a later page) or after it (not seen on this pass), never twice.
 * `total` is counted on the first page only: later pages are read by clients already holding it, and
 * counting every page would cost a scan per page.
 */
export async function historyPage(
  store: Store,
  owner: HistoryOwner,
  after: HistoryPosition | null,
  options: PageOptions,
): Promise<HistoryPage | null> {
  const rows = await store.readForUser<PageRow>(owner, (fence) => pageQuery(owner, after, options, fence));
  const last = rows.at(-1);
  if (last === undefined) return null;
  return {
    events: attendedOf(rows, options.includeMedia),
    catalogVersion: last.catalog_version,
    next:
      last.has_more && last.event_id !== null
        ? { startsAtMs: last.starts_at_ms, eventId: last.event_id }
        : null,
    total: after !== null ? null : Number(last.total ?? 0),
  };
}
