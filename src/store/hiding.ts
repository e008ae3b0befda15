import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";

/**
 * Hides or unhides an event in a user's history (docs/api.md §8). Idempotent: setting the flag it already
 * has is a success. Only an event the user has kept media at can be hidden; returns false otherwise.
 * The flag lives on the user's event row, so it survives later batches matching the event again.
 *
 * The user's revision moves in the same statement (src/store/standbyReads.ts), its row taken first as a
 * batch takes it, so a hide and a batch of the same user lock their rows in one order; one statement, so
 * a request called off at its deadline leaves no transaction behind.
 */
export async function setEventHidden(
  store: Store,
  userId: string,
  eventId: number,
  hidden: boolean,
): Promise<boolean> {
  const updated = await store.rows(sql`
    with bumped as (update users set revision = revision + 1 where id = ${userId}::uuid returning id)
    update user_events set hidden = ${hidden}
    where user_id = (select id from bumped) and event_id = ${eventId}::int and media_count > 0
    returning event_id`);
  return updated.length > 0;
}
