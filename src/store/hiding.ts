import { and, eq, gt } from "drizzle-orm";
import type { Store } from "./db.ts";
import { userEvents } from "./schema/index.ts";

/**
 * Hides or unhides an event in a user's history (docs/api.md §8). Idempotent: setting the flag it already
 * has is a success. Only an event the user has kept media at can be hidden; returns false otherwise.
 * The flag lives on the user's event row, so it survives later batches matching the event again.
 */
export async function setEventHidden(
  store: Store,
  userId: string,
  eventId: number,
  hidden: boolean,
): Promise<boolean> {
  const updated = await store.db
    .update(userEvents)
    .set({ hidden })
    .where(and(eq(userEvents.userId, userId), eq(userEvents.eventId, eventId), gt(userEvents.mediaCount, 0)))
    .returning({ eventId: userEvents.eventId });
  return updated.length > 0;
}
