import { sql } from "drizzle-orm";
import { type BatchWrite, batchPlanSettings, type KeptMedia, sentColumns } from "./batchInput.ts";
import { userConfidenceUpdate } from "./confidenceSql.ts";
import { ATTENDANCE_COPIES_LOCK, type Store } from "./db.ts";
import { batchStatement } from "./ingest.ts";

/**
 * The queue of catalog corrections (contract §15, `catalog_corrections`, filled by an import in
 * src/store/catalog/corrections.ts) and the writes that place kept items again. Each user's items are
 * placed under the user's row lock in a transaction of their own, so a user's batches wait for at most
 * one user's re-placement and other users' batches never wait.
 */

/** How long a claimed correction stays another instance's before it may take it over. */
const LEASE_SECONDS = 120;

/** A kept item as the matching needs it, read back from `media`. */
export type StoredItem = Omit<KeptMedia, "eventId" | "venueId" | "spot" | "inCore" | "weight"> & {
  eventId: number;
};

/**
 * Claims up to `limit` queued events that an index at `indexVersion` can place, leasing them so another
 * instance leaves them alone; an expired lease (an instance that stopped half-way) is taken over.
 */
export async function claimCorrections(
  store: Store,
  indexVersion: number,
  limit: number,
): Promise<{ eventId: number; version: number }[]> {
  const rows = await store.rows<{ event_id: number; version: string | number }>(sql`
    update catalog_corrections set leased_until = now() + make_interval(secs => ${LEASE_SECONDS})
    where event_id in (
      select event_id from catalog_corrections
      where version <= ${indexVersion} and (leased_until is null or leased_until < now())
      order by event_id limit ${limit} for update skip locked)
    returning event_id, version`);
  return rows.map((row) => ({ eventId: row.event_id, version: Number(row.version) }));
}

/** Extends the lease of claimed events while their items are still being placed. */
export async function renewCorrections(store: Store, eventIds: readonly number[]): Promise<void> {
  await store.rows(sql`update catalog_corrections
    set leased_until = now() + make_interval(secs => ${LEASE_SECONDS})
    where event_id = any(${sql.param(eventIds)}::int[]) and leased_until is not null`);
}

/**
 * Queues again the events a batch kept items at when it was matched on an index older than the catalog
 * it was written under: a correction drained meanwhile cannot have seen those items. Queued unleased, so
 * an instance working on the same events leaves this row for a later claim.
 */
export async function requeueCorrections(
  store: Store,
  eventIds: readonly number[],
  version: number,
): Promise<void> {
  await store.rows(sql`insert into catalog_corrections (event_id, version)
    select id, ${version} from unnest(${sql.param(eventIds)}::int[]) as id
    on conflict (event_id) do update
    set version = greatest(catalog_corrections.version, excluded.version), leased_until = null`);
}

/** Drops claimed events that no newer import queued again meanwhile. */
export async function finishCorrections(
  store: Store,
  claimed: readonly { eventId: number; version: number }[],
): Promise<void> {
  if (claimed.length === 0) return;
  await store.rows(sql`delete from catalog_corrections c
    using unnest(${sql.param(claimed.map((c) => c.eventId))}::int[], ${sql.param(claimed.map((c) => c.version))}::int8[])
      as done(event_id, version)
    where c.event_id = done.event_id and c.version <= done.version and c.leased_until is not null`);
}

/** Queued events, and how many of them an index at `indexVersion` can already place. */
export async function pendingCorrections(store: Store): Promise<{ events: number; newestVersion: number }> {
  const [row] = await store.rows<{ events: number; newest: string | number | null }>(
    sql`select count(*)::int as events, max(version) as newest from catalog_corrections`,
  );
  return { events: row?.events ?? 0, newestVersion: Number(row?.newest ?? 0) };
}

/**
 * The users who keep items at any of `eventIds`: one pass over `media`, which has no index led by the
 * event (every batch would pay for one), so corrections are claimed many at a time.
 */
export async function usersAtEvents(store: Store, eventIds: readonly number[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const rows = await store.rows<{ user_id: string }>(
    sql`select distinct user_id from media where event_id = any(${sql.param(eventIds)}::int[])`,
  );
  return rows.map((row) => row.user_id);
}

/** What placing one user's items again did to them. */
export type Replacement = { items: number; moved: number; removed: number };

/**
 * Places a user's items kept at `eventIds` again, atomically: `place` gets the items as stored and
 * answers, for each, where a re-send would keep it now (null: it matches nothing and goes) or `"stay"`
 * for an item that is to be left exactly as it is. Written by the batch statement, as a re-send is
 * (src/store/ingest.ts), under the user's row lock and without moving the user's sync mark. Returns null
 * when the user no longer exists.
 */
export async function replaceUserItems(
  store: Store,
  userId: string,
  eventIds: readonly number[],
  defaultDurationMinutes: number,
  place: (items: readonly StoredItem[]) => Promise<(KeptMedia | null | "stay")[]>,
): Promise<Replacement | null> {
  return store.transaction(async (tx) => {
    await tx.rows(sql`select pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8)`);
    const [user] = await tx.rows<{ partner_id: string }>(
      sql`select partner_id from users where id = ${userId}::uuid for update`,
    );
    if (user === undefined) return null;
    const items = (await tx.rows<StoredRow>(storedItems(userId, eventIds))).map(storedItemOf);
    const placements = await place(items);
    const batch: BatchWrite = {
      userId,
      partnerId: user.partner_id,
      acceptedIds: [],
      kept: [],
      defaultDurationMinutes,
    };
    const acceptedIds: string[] = [];
    const kept: KeptMedia[] = [];
    let moved = 0;
    let removed = 0;
    items.forEach((item, i) => {
      const placement = placements[i] ?? null;
      if (placement === "stay") return;
      acceptedIds.push(item.mediaId);
      if (placement === null) removed++;
      else {
        kept.push(placement);
        if (placement.eventId !== item.eventId) moved++;
      }
    });
    if (acceptedIds.length > 0) {
      await tx.rows(batchPlanSettings);
      await tx.rows(batchStatement({ ...batch, acceptedIds, kept }));
    }
    // A correction of an event's end or known time moves no item yet changes its confidence.
    await tx.rows(userConfidenceUpdate(userId, defaultDurationMinutes, eventIds));
    return { items: items.length, moved, removed };
  });
}

const storedItems = (userId: string, eventIds: readonly number[]) => sql`
  select event_id, ${sentColumns.select}
  from media where user_id = ${userId}::uuid and event_id = any(${sql.param(eventIds)}::int[])
  order by media_id`;

type StoredRow = { event_id: number } & Record<string, unknown>;

function storedItemOf(row: StoredRow): StoredItem {
  return { ...sentColumns.members(row), eventId: row.event_id };
}
