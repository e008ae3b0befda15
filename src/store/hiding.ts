import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";

/**
 * Hides or unhides an event in a user's history (docs/api.md §8). Idempotent: setting the flag it already
 * has is a success. Only an event the user has kept media at can be hidden; returns false otherwise.
 * The flag lives on the user's event row, so it survives later batches matching the event again.
 *
 * The user's revision moves in the same transaction (src/store/standbyReads.ts), its row taken first as
 * a batch takes it, so a hide and a batch of the same user lock their rows in one order.
 */
export async function setEventHidden(
  store: Store,
  userId: string,
  eventId: number,
  hidden: boolean,
): Promise<boolean> {
  return store.transaction(async (tx) => {
    await tx.rows(sql`update users set revision = revision + 1 where id = ${userId}::uuid`);
    const updated = await tx.rows(sql`
      update user_events set hidden = ${hidden}
      where user_id = ${userId}::uuid and event_id = ${eventId}::int and media_count > 0
      returning event_id`);
    return updated.length > 0;
  });
}
