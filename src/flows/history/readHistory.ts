import type { Store } from "../../store/db.ts";
import { type HistoryPosition, historyPage } from "../../store/history.ts";
import type { EventFactsCache } from "../catalogFacts/eventFacts.ts";

export type HistoryRequest = {
  partnerId: string;
  userId: string;
  /** Where the page starts: after the event the partner's cursor named, or at the newest. */
  after: HistoryPosition | null;
  limit: number;
  includeMedia: boolean;
  /** min_confidence in hundredths; 0 leaves nothing out. */
  minConfidence: number;
};

export type HistoryOutcome = {
  /** Each event of the page as JSON text (see `eventText`), newest first. */
  eventTexts: string[];
  /** The position after the page's last event, for the next cursor; null when this page is the last. */
  next: HistoryPosition | null;
  /** How many events the history shows in all; on the first page only. */
  total: number | null;
};

/**
 * One page of a user's attended events (docs/architecture.md §4): one statement reads the page, the
 * user and the catalog version together, then the events' facts come from the cache at that version.
 * Null when the partner has no such user (the page statement is the user lookup too).
 */
export async function readHistory(
  { store, eventFacts }: { store: Store; eventFacts: EventFactsCache },
  request: HistoryRequest,
): Promise<HistoryOutcome | null> {
  const { partnerId, userId, after, limit, includeMedia, minConfidence } = request;
  const page = await historyPage(store, { partnerId, userId }, after, { limit, includeMedia, minConfidence });
  if (page === null) return null;
  const eventTexts = await eventFacts.eventTexts(store, page.catalogVersion, page.events);
  return { eventTexts, next: page.next, total: page.total };
}
