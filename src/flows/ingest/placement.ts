import { itemConfidence, itemWeight, spotCell } from "../../confidence/confidence.ts";
import type { Matcher, PlacedCandidate } from "../../shards/matcher.ts";
import type { KeptMedia } from "../../store/ingest.ts";
import { type AcceptedItem, matchInstantMs, utcText } from "./mediaItems.ts";

/**
 * Where accepted items go (docs/api.md §4, §5): each item's best candidate and, when that event is
 * licensed, the item as kept there. The one placement a batch and a catalog correction both use, so an
 * item placed again after a correction lands exactly where a re-send would put it.
 */
export type Placement = { candidate: PlacedCandidate | null; kept: KeptMedia | null };

/**
 * A kept item with what its event's confidence needs from it: its weight, its spot cell and whether it
 * lies in the venue's core.
 */
function keptOf(item: AcceptedItem, candidate: PlacedCandidate): KeptMedia {
  const { id, takenAt, ...stored } = item;
  const { row, column, inCore } = spotCell(item, candidate.venue);
  return {
    ...stored,
    mediaId: id,
    takenAt: utcText(takenAt),
    eventId: candidate.eventId,
    venueId: candidate.venueId,
    spot: { row, column },
    inCore,
    weight: itemWeight(candidate.place),
  };
}

export async function placeItems(matcher: Matcher, items: readonly AcceptedItem[]): Promise<Placement[]> {
  if (items.length === 0) return [];
  const candidates = await matcher.match(
    items.map((item) => ({
      latitude: item.latitude,
      longitude: item.longitude,
      takenAtMs: matchInstantMs(item.takenAt),
    })),
  );
  if (candidates.length !== items.length) {
    throw new Error(`matcher answered ${candidates.length} of ${items.length} queries`);
  }
  return items.map((item, i) => {
    const candidate = candidates[i] ?? null;
    return { candidate, kept: candidate?.licensed ? keptOf(item, candidate) : null };
  });
}

/**
 * An item's own confidence in its match (docs/api.md §15), or null when it was not kept; `timeUnknown`:
 * the catalog does not know the event's time.
 */
export function placementConfidence({ candidate, kept }: Placement, timeUnknown: boolean): number | null {
  return kept !== null && candidate !== null
    ? itemConfidence(candidate.place, kept.inCore === true, timeUnknown)
    : null;
}
