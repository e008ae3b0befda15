import type { CatalogTransaction } from "../transaction.ts";
import type { FeedEvent, FeedNotice, UndatedEvent } from "./feedPage.ts";

/**
 * Events a page names without a date (docs/operations.md §3): one an earlier import of this source met
 * takes the page's status, name, venue and performers and keeps its stored start, end and unknown time, so
 * a show whose date is withdrawn stops being matched; any other has no date to be stored at and is skipped.
 */

type Stored = { id: number; starts_at_local: string; ends_at_local: string | null; time_unknown: boolean };

export async function datedEvents(
  tx: CatalogTransaction,
  events: ReadonlyMap<string, FeedEvent | UndatedEvent>,
  /** The catalog id each event key already has (a linked one is not written anyway). */
  storedIds: ReadonlyMap<string, number>,
): Promise<{ events: Map<string, FeedEvent>; skipped: FeedNotice[] }> {
  const undated = [...events.values()].filter((e) => !("startsAtLocal" in e));
  const ids = undated.flatMap((e) => storedIds.get(e.key) ?? []);
  const rows =
    ids.length === 0
      ? []
      : await tx.query<Stored>(
          `select id, starts_at_local, ends_at_local, time_unknown from events where id in (${ids.join(", ")})`,
        );
  const stored = new Map(rows.map((row) => [row.id, row]));
  const dated = new Map<string, FeedEvent>();
  const skipped: FeedNotice[] = [];
  for (const [key, event] of events) {
    if ("startsAtLocal" in event) {
      dated.set(key, event);
      continue;
    }
    const row = stored.get(storedIds.get(key) ?? 0);
    if (row === undefined) {
      skipped.push({ place: event.place, message: `event ${key} skipped: no start date` });
      continue;
    }
    dated.set(key, {
      ...event,
      startsAtLocal: row.starts_at_local,
      endsAtLocal: row.ends_at_local,
      timeUnknown: row.time_unknown,
    });
  }
  return { events: dated, skipped };
}
