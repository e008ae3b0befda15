import { type SQL, sql } from "drizzle-orm";
import {
  BATCH_SLOTS,
  type BatchSlot,
  type BatchWrite,
  batchValues,
  type KeptMedia,
  keptColumns,
  NO_SUCH_USER,
  syncMarkStatement,
} from "./batchInput.ts";
import { confidenceCtes, confidenceValue } from "./confidenceSql.ts";
import type { Store } from "./db.ts";
import { type AttendedRow, attendedEventsQuery, mediaListAggregate } from "./eventDetails.ts";
import { sqlStateOf } from "./failures.ts";
import { writeKeepingNothing } from "./keepingNothing.ts";
import { renderedOnce, type Slots } from "./renderedStatement.ts";
import { inOneRoundTrip } from "./roundTrip.ts";

export type { BatchWrite, KeptMedia };

/**
 * One statement for the whole batch: upserts the kept items, deletes accepted items that no longer match,
 * and applies the exact count changes to user_events. The counts are deltas between the rows the batch
 * replaces (`previous`) and the rows it writes (`incoming`): an item moving from event A to B is -1 on A
 * and +1 on B; a re-sent unchanged item leaves user_events untouched. The deltas
 * are exact only because `writeBatch` holds the user's row lock, so no other batch of this user changes
 * media between the snapshot `previous` reads and the writes. A row whose count reaches zero is kept, so
 * a hidden flag survives its media being re-evaluated away and back. Every event whose items the batch
 * changed, and every one whose routine spots it changed, gets its confidence recomputed in the same
 * upsert (src/store/confidenceSql.ts); an event whose count nets to zero still gets its confidence.
 *
 * `previous` comes from `media_replaced` (src/store/sql/media_replaced.sql), which reads a user
 * who keeps few items for the batch's size by the user's index range and anyone else by one primary-key
 * probe per id, so a batch costs the same for a user with 50 items as for one with 50,000, whatever table
 * size the plans were built on. A re-sent item whose members are all unchanged is not rewritten
 * (full-library rescans re-send everything), so it costs no new row version and no index updates.
 *
 * The removal deletes the rows `previous` found, by row id (`ctid`), so no plan can visit more than those.
 * The ids stay valid through the statement: the upsert leaves items outside `incoming` alone, and only a
 * batch of this user writes this user's media, which the row lock keeps out. The event facts user_events
 * copies come from one key lookup per event, and every count change refreshes them. `replaced` is the
 * part of `previous` the batch rewrites or removes (not the re-sent unchanged items), worked out once for
 * the touched events and the spot counts; `upserted` returns the rewritten items' venue, spot and core
 * flag for the same reason.
 *
 * `rendered` writes the stored media list (`user_event_media`, see `mediaListJson`) of every event whose
 * items this batch changed: where an upserted row now is, where a rewritten or removed row was. A part
 * of a statement cannot see the statement's own writes, so the list is built from what the snapshot
 * holds there minus the rows the batch replaces (`previous`), plus the batch's items there
 * (`event_items`, src/store/confidenceSql.ts, which the confidence reads too); the row lock makes that
 * the state the commit leaves. Re-sent unchanged items touch no list. (Exported for
 * test/store-plans.test.ts, which reads its plan.)
 */
export function batchStatement(batch: BatchWrite): SQL {
  return batchWithValues(batch).statement();
}

function batchStatementOf(s: Slots<BatchSlot>): SQL {
  const userId = s.userId;
  return sql`
    with incoming as (
      ${keptColumns.incoming(s)}
    ),
    previous as (
      select row_id, replaced_media_id as media_id, replaced_event_id as event_id,
             replaced_media_type as media_type
      from media_replaced(${userId}::uuid, ${s.acceptedIds}::text[])
    ),
    upserted as (
      insert into media (user_id, ${keptColumns.names}, updated_at)
      select ${userId}::uuid, ${keptColumns.values}, now()
      from incoming
      on conflict (user_id, media_id) do update set
        ${keptColumns.updates}, updated_at = excluded.updated_at
      where ${keptColumns.changed}
      returning media_id, event_id, venue_id, spot_row::int as spot_row, spot_col::int as spot_col, in_core
    ),
    removed as (
      delete from media
      where ctid = any(array(
        select row_id from previous where media_id not in (select media_id from incoming)
      ))
    ),
    replaced as (
      select row_id, event_id from previous
      where media_id in (select media_id from upserted) or media_id not in (select media_id from incoming)
    ),
    touched as (
      select event_id from upserted
      union
      select event_id from replaced
    ),
    ${confidenceCtes(userId)},
    rendered as (
      insert into user_event_media (user_id, event_id, media_json)
      select ${userId}::uuid, t.event_id, coalesce(l.media_json, '[]')
      from touched t
      left join (
        select i.event_id, ${mediaListAggregate(sql`i`)} as media_json from event_items i group by i.event_id
      ) l on l.event_id = t.event_id
      on conflict (user_id, event_id) do update set media_json = excluded.media_json
    ),
    deltas as (
      select event_id,
             sum(n)::int as media_delta,
             coalesce(sum(n) filter (where media_type = 'photo'), 0)::int as photo_delta,
             coalesce(sum(n) filter (where media_type = 'video'), 0)::int as video_delta
      from (
        select event_id, media_type, 1 as n from incoming
        union all
        select event_id, media_type, -1 as n from previous
      ) as change
      group by event_id
    )
    insert into user_events (user_id, event_id, starts_at, starts_at_local, venue_id, licensed,
                             media_count, photo_count, video_count, confidence)
    select ${userId}::uuid, k.event_id, e.starts_at, e.starts_at_local, e.venue_id, e.licensed,
           coalesce(d.media_delta, 0), coalesce(d.photo_delta, 0), coalesce(d.video_delta, 0),
           ${confidenceValue(sql`sc`, sql`e`, s.defaultDurationMinutes)}
    from recompute k
    left join deltas d on d.event_id = k.event_id
    left join scores sc on sc.event_id = k.event_id
    -- offset 0: one key probe per event, where a join would read all of a mid-sized catalog's events
    cross join lateral (
      select starts_at, ends_at, starts_at_local, venue_id, licensed, time_unknown from events where id = k.event_id offset 0
    ) e
    on conflict (user_id, event_id) do update set
      starts_at = excluded.starts_at,
      starts_at_local = excluded.starts_at_local,
      venue_id = excluded.venue_id,
      licensed = excluded.licensed,
      media_count = user_events.media_count + excluded.media_count,
      photo_count = user_events.photo_count + excluded.photo_count,
      video_count = user_events.video_count + excluded.video_count,
      confidence = excluded.confidence`;
}

const renderedBatch = renderedOnce(BATCH_SLOTS, batchStatementOf);
const batchWithValues = (batch: BatchWrite) => renderedBatch(batchValues(batch));

/** What a committed batch leaves: the user's sync mark and what the user now keeps at the answer's events. */
export type WrittenBatch = { lastSyncAt: Date; events: AttendedRow[] };

/**
 * Stores a batch atomically: either every kept item, every removal, the user_events counts and the sync
 * mark are committed, or nothing is. Returns the user's `last_sync_at` after the batch and, read in the
 * same transaction after the writes, what the user keeps at each of `answerEvents` in their order (the
 * batch answer's events, `attendedEventsQuery`), or null, with nothing written, when the partner has no
 * such user.
 *
 * The sync mark is its own statement, before the batch statement, not a data-modifying CTE of it: every
 * part of a statement reads the snapshot taken when the statement starts, so a batch that waited on the
 * row lock inside its own statement would still read `previous` from before the other batch committed,
 * and the counts would drift. As a statement of its own the lock is held before the batch statement
 * takes its snapshot (READ COMMITTED). Sending them together keeps the whole batch one round trip.
 *
 * A batch that keeps nothing (most of them: most of a camera roll matches no event) is first written
 * with the other such batches waiting at that moment (`writeKeepingNothing`,
 * src/store/sql/batches_keeping_nothing.sql): the sync mark and a check that none of its ids is stored. When none is, that is the whole write. When some
 * are, or another transaction holds the user's row, nothing was written and the batch goes again as a
 * whole batch, which waits for the row and removes the stored ids: two round trips for a rare batch,
 * against a BEGIN, a COMMIT and the batch statement's plan for every batch that has nothing to write.
 */
export async function writeBatch(
  store: Store,
  batch: BatchWrite,
  answerEvents: readonly number[] = [],
): Promise<WrittenBatch | null> {
  if (batch.kept.length === 0 && batch.acceptedIds.length > 0 && answerEvents.length === 0) {
    const outcome = await writeKeepingNothing(store, batch);
    if (outcome === "no_user") return null;
    if (outcome !== "whole") return { lastSyncAt: outcome.lastSyncAt, events: [] };
  }
  const readsEvents = answerEvents.length > 0;
  let results: unknown[][];
  try {
    results = await inOneRoundTrip(store, [
      syncMarkStatement(batch),
      ...(batch.acceptedIds.length > 0 ? [batchWithValues(batch)] : []),
      ...(readsEvents ? [attendedEventsQuery(batch.userId, answerEvents)] : []),
    ]);
  } catch (error) {
    if (sqlStateOf(error) === NO_SUCH_USER) return null;
    throw error;
  }
  // The rows' shapes are those of the statements above: the sync mark's one column, attendedEventsQuery's.
  const mark = results[0]?.[0] as { last_sync_ms: number } | undefined;
  if (!mark) throw new Error("the sync mark statement returned no row");
  const events = readsEvents ? ((results.at(-1) ?? []) as AttendedRow[]) : [];
  return { lastSyncAt: new Date(mark.last_sync_ms), events };
}
