import postgres from "postgres";
import { batchKeyOf } from "./faultFixture.ts";
import type { BatchRecord } from "./faultTraffic.ts";

/**
 * What the database holds, checked against itself and against what the clients were told: each
 * history row's counts equal its media rows', each stored media list lists exactly its media rows in
 * order, every batch is stored whole or not at all, and every acknowledged batch is stored (unless
 * `acknowledged` says they may be lost).
 * Returns the problems found (empty when all holds), a few of each kind.
 */
export async function storedProblems(
  url: string,
  batches: readonly BatchRecord[],
  /** "may be lost": asynchronous replication's failover may lose acknowledged batches, whole. */
  acknowledged: "kept" | "may be lost" = "kept",
): Promise<string[]> {
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const counts = await client<
      { user_id: string; event_id: number; kept: number[]; counted: number[] | null }[]
    >`
      with kept as (
        select user_id, event_id, count(*)::int as media,
               count(*) filter (where media_type = 'photo')::int as photos,
               count(*) filter (where media_type = 'video')::int as videos
        from media group by user_id, event_id
      )
      select coalesce(k.user_id, ue.user_id)::text as user_id, coalesce(k.event_id, ue.event_id) as event_id,
             array[coalesce(k.media, 0), coalesce(k.photos, 0), coalesce(k.videos, 0)] as kept,
             case when ue.user_id is null then null
                  else array[ue.media_count, ue.photo_count, ue.video_count] end as counted
      from kept k full join user_events ue on ue.user_id = k.user_id and ue.event_id = k.event_id
      where ue.user_id is null
         or (coalesce(k.media, 0), coalesce(k.photos, 0), coalesce(k.videos, 0))
            is distinct from (ue.media_count, ue.photo_count, ue.video_count)`;
    const lists = await client<{ user_id: string; event_id: number; rows: string[]; listed: string[] }[]>`
      with rows as (
        select user_id, event_id,
               array_agg(media_id || ':' || media_type order by taken_at, media_id collate "C") as ids
        from media group by user_id, event_id
      ),
      listed as (
        select user_id, event_id,
               array(select item ->> 'media_id' || ':' || (item ->> 'media_type')
                     from jsonb_array_elements(media_json::jsonb) with ordinality as l(item, n)
                     order by n) as ids
        from user_event_media
      )
      select coalesce(r.user_id, l.user_id)::text as user_id, coalesce(r.event_id, l.event_id) as event_id,
             coalesce(r.ids, '{}') as rows, coalesce(l.ids, '{}') as listed
      from rows r full join listed l on l.user_id = r.user_id and l.event_id = r.event_id
      where coalesce(r.ids, '{}') is distinct from coalesce(l.ids, '{}')`;
    const stored = await client<{ media_id: string }[]>`select media_id from media`;

    const storedIds = new Set(stored.map((row) => row.media_id));
    const perBatch = new Map<string, number>();
    for (const id of storedIds) perBatch.set(batchKeyOf(id), (perBatch.get(batchKeyOf(id)) ?? 0) + 1);
    const sizeOf = new Map(batches.map((b) => [b.batchKey, b.ids.length]));
    const partial = [...perBatch].filter(([batch, count]) => count !== (sizeOf.get(batch) ?? count));
    const lost = batches
      .filter((b) => acknowledged === "kept" && b.outcome.kind === "answer" && b.outcome.status === 200)
      .filter((b) => b.ids.some((id) => !storedIds.has(id)));

    const few = <T>(items: T[], show: (item: T) => string) =>
      items
        .slice(0, 5)
        .map(show)
        .concat(items.length > 5 ? [`… and ${items.length - 5} more`] : []);
    return [
      ...few(
        counts,
        (c) =>
          `user ${c.user_id} event ${c.event_id}: media rows (all, photos, videos) ${c.kept}, user_events ${c.counted ?? "missing"}`,
      ),
      ...few(
        lists,
        (l) =>
          `user ${l.user_id} event ${l.event_id}: stored list [${l.listed.join(" ")}] but media rows [${l.rows.join(" ")}]`,
      ),
      ...few(partial, ([batch, count]) => `batch ${batch}: ${count} of ${sizeOf.get(batch)} items stored`),
      ...few(
        lost,
        (b) =>
          `batch ${b.batchKey} was acknowledged but ${b.ids.filter((id) => !storedIds.has(id)).length} items are missing`,
      ),
    ];
  } finally {
    await client.end({ timeout: 1 });
  }
}
