import { haversineMeters } from "./geo.ts";
import type { Candidate, IndexEvent, IndexVenue, Matcher, MatchQuery, MatchSettings } from "./matcher.ts";

const MINUTE_MS = 60_000;

/**
 * Contract §5 written as plainly as possible: every venue, every event, no index. It is the oracle the
 * sharded engine is tested against, so it favours being obviously right over being fast.
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

  async match(queries: readonly MatchQuery[]): Promise<(Candidate | null)[]> {
    return queries.map((query) => this.best(query));
  }

  async close(): Promise<void> {}

  private best(query: MatchQuery): Candidate | null {
    let best: { candidate: Candidate; timeGap: number; distance: number } | null = null;
    for (const venue of this.venues) {
      const distance = haversineMeters(query.latitude, query.longitude, venue.latitude, venue.longitude);
      if (distance > (venue.radiusM ?? this.settings.radiusM)) continue;
      for (const event of this.eventsByVenue.get(venue.id) ?? []) {
        const start = event.startsAtMs;
        const end = event.endsAtMs ?? start + this.settings.defaultDurationMinutes * MINUTE_MS;
        const from = start - this.settings.beforeMinutes * MINUTE_MS;
        const to = end + this.settings.afterMinutes * MINUTE_MS;
        if (query.takenAtMs < from || query.takenAtMs > to) continue;
        const timeGap =
          query.takenAtMs < start ? start - query.takenAtMs : Math.max(0, query.takenAtMs - end);
        const better =
          best === null ||
          timeGap < best.timeGap ||
          (timeGap === best.timeGap &&
            (distance < best.distance || (distance === best.distance && event.id < best.candidate.eventId)));
        if (better) {
          best = {
            candidate: { eventId: event.id, venueId: venue.id, licensed: event.licensed },
            timeGap,
            distance,
          };
        }
      }
    }
    return best?.candidate ?? null;
  }
}
