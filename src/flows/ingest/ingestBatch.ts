import type { Matcher, MatchSettings } from "../../shards/matcher.ts";
import { requeueCorrections } from "../../store/corrections.ts";
import type { Store } from "../../store/db.ts";
import { attendedOf } from "../../store/eventDetails.ts";
import { writeBatch } from "../../store/ingest.ts";
import type { EventFactsCache } from "../catalogFacts/eventFacts.ts";
import { type AcceptedItem, classifyItems, type Rejection, type ValidatedItem } from "./mediaItems.ts";
import { type Placement, placeItems, placementConfidence } from "./placement.ts";

/** An accepted item's match (docs/api.md §4), whether or not it was kept. */
export type Match = {
  mediaId: string;
  matched: boolean;
  eventId: number | null;
  venueId: number | null;
  /** This item's match on its own, 0 to 1 (docs/api.md §15); null when not matched. */
  confidence: number | null;
};

export type BatchOutcome = {
  accepted: number;
  /** How many items were kept: the matched ones. */
  matched: number;
  rejected: Rejection[];
  matches: Match[];
  /** Each matched event as JSON text (see `eventText`), in the order of its first match. */
  eventTexts: string[];
  lastSyncAt: Date;
};

export type IngestDeps = {
  store: Store;
  matcher: Matcher;
  eventFacts: EventFactsCache;
  config: { match: MatchSettings };
};

/**
 * docs/api.md §4: only a licensed best candidate is a match; an unlicensed one still names its venue.
 * `timeUnknown` holds the matched events whose time the catalog does not know.
 */
function matchOf(item: AcceptedItem, placement: Placement, timeUnknown: ReadonlySet<number>): Match {
  const eventId = placement.kept?.eventId ?? null;
  return {
    mediaId: item.id,
    matched: placement.kept !== null,
    eventId,
    venueId: placement.candidate?.venueId ?? null,
    confidence: placementConfidence(placement, eventId !== null && timeUnknown.has(eventId)),
  };
}

/**
 * A validated batch from classification to response data (docs/architecture.md §3): per-item rules,
 * matching outside any transaction, the facts the cache lacks read before the write, one atomic write
 * that also reads what the user keeps at each matched event, and the events' texts. Null when the
 * partner has no such user: the write is the user lookup too, so nothing was stored.
 */
export async function ingestMediaBatch(
  { store, matcher, eventFacts, config }: IngestDeps,
  user: { partnerId: string; userId: string },
  items: readonly ValidatedItem[],
): Promise<BatchOutcome | null> {
  const { accepted, rejected } = classifyItems(items);
  const indexVersion = Number(matcher.version());
  const placements = await placeItems(matcher, accepted);
  const kept = placements.flatMap((p) => (p.kept === null ? [] : [p.kept]));
  const eventIds = [...new Set(kept.map((m) => m.eventId))];
  // Read before anything is written: a failed read stores nothing, and the transaction holds the user's
  // row lock no longer than its writes need.
  const prefetched = await eventFacts.readUncached(store, eventIds);
  const written = await writeBatch(
    store,
    {
      ...user,
      acceptedIds: accepted.map((a) => a.id),
      kept,
      defaultDurationMinutes: config.match.defaultDurationMinutes,
    },
    eventIds,
  );
  if (written === null) return null;
  const { lastSyncAt, events } = written;
  const timeUnknown = new Set(
    events.flatMap((e) => (e.time_unknown && e.event_id !== null ? [e.event_id] : [])),
  );
  const matches = accepted.map((item, i) =>
    matchOf(item, placements[i] ?? { candidate: null, kept: null }, timeUnknown),
  );
  const version = events[0]?.catalog_version;
  if (version !== undefined && Number(version) > indexVersion) {
    await requeueCorrections(store, eventIds, Number(version));
  }
  // An import that committed between the read and the write makes the facts read out of date: they are
  // read again after the commit, the one case where a committed batch can still fail (a 500, safe to
  // re-send).
  const readAlong =
    prefetched !== null && prefetched.catalogVersion === version ? prefetched.facts : undefined;
  const eventTexts =
    version === undefined
      ? []
      : await eventFacts.eventTexts(store, version, attendedOf(events, true), readAlong);
  return { accepted: accepted.length, matched: kept.length, rejected, matches, eventTexts, lastSyncAt };
}
