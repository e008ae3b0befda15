import { itemPlace } from "../confidence/confidence.ts";
import { haversineMeters } from "./geo.ts";
import type {
  IndexEvent,
  IndexVenue,
  Matcher,
  MatchQuery,
  MatchSettings,
  PlacedCandidate,
} from "./matcher.ts";
import { candidateScore, type Ranked, ranksBefore, timeGap } from "./score.ts";

const MINUTE_MS = 60_000;

/**
 * The matching rule (docs/api.md §5) written as plainly as possible: every venue, every event,
 * no index. It is the oracle the sharded engine is tested against, so it favours being obviously right
 * over being fast.
 *
 * Every candidate is ranked by the rule's one definition (score.ts). A capture can only be outside
 * [start, end] on a side whose padding is not zero, so the time share never divides by zero.
 */
export class ReferenceMatcher implements Matcher {
  private readonly eventsByVenue = new Map<number, IndexEvent[]>();

  constructor(
    private readonly venues: readonly IndexVenue[],
    events: readonly IndexEvent[],
    private readonly settings: MatchSettings,
  ) {
    for (const event of events) {
      const list = this.eventsByVenue.get(event.venueId) ?? [];
      list.push(event);
      this.eventsByVenue.set(event.venueId, list);
    }
  }

  async match(queries: readonly MatchQuery[]): Promise<(PlacedCandidate | null)[]> {
    return queries.map((query) => this.best(query));
  }

  /** Built from arrays, not from a stored catalog. */
  version(): string {
    return "0";
  }

  async close(): Promise<void> {}

  private best(query: MatchQuery): PlacedCandidate | null {
    const beforeMs = this.settings.beforeMinutes * MINUTE_MS;
    const afterMs = this.settings.afterMinutes * MINUTE_MS;
    let best: (Ranked & { candidate: PlacedCandidate }) | null = null;
    for (const venue of this.venues) {
      const distance = haversineMeters(query.latitude, query.longitude, venue.latitude, venue.longitude);
      const radius = venue.radiusM ?? this.settings.radiusM;
      if (distance > radius) continue;
      for (const event of this.eventsByVenue.get(venue.id) ?? []) {
        const start = event.startsAtMs;
        const end = event.endsAtMs ?? start + this.settings.defaultDurationMinutes * MINUTE_MS;
        if (query.takenAtMs < start - beforeMs || query.takenAtMs > end + afterMs) continue;
        const gap = timeGap(query.takenAtMs, start, end);
        const score = candidateScore(distance / radius, query.takenAtMs, start, end, beforeMs, afterMs);
        if (best === null || ranksBefore(score, gap, distance, event.id, best)) {
          best = {
            candidate: {
              eventId: event.id,
              venueId: venue.id,
              licensed: event.licensed,
              place: itemPlace(query, venue, { startsAtMs: start, endsAtMs: end }, this.settings),
              venue: { latitude: venue.latitude, longitude: venue.longitude, radiusM: radius },
            },
            score,
            gap,
            distance,
            id: event.id,
          };
        }
      }
    }
    return best?.candidate ?? null;
  }
}
