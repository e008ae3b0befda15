import { haversineMeters } from "../../src/shards/geo.ts";
import type { MatchQuery, MatchSettings } from "../../src/shards/matcher.ts";
import { candidateScore, type Ranked, ranksBefore, timeGap } from "../../src/shards/score.ts";
import type { WorldEvent, WorldVenue } from "./worldModel.ts";

/**
 * Every candidate event of a photo (within the venue's radius and the event's window), with what a
 * rule or a confidence needs: distance over radius and time distance over padding. Lets the benchmark
 * apply rules the service does not use (time distance first), and check that it agrees with the
 * engine on the one it does.
 */

const MINUTE_MS = 60_000;
/** Grid cell in degrees: larger than any generated radius at the generated latitudes. */
const CELL_DEG = 0.05;

export type Candidate = {
  event: WorldEvent;
  venue: WorldVenue;
  distanceM: number;
  /** The venue's radius, or the default where the catalog has none. */
  radiusM: number;
  /** distance / radius: 0 at the centre, 1 at the edge. */
  distanceShare: number;
  /** Milliseconds outside [start, end]; 0 inside. */
  gapMs: number;
  /** The rule's score (src/shards/score.ts): distanceShare plus gap over the padding on its side. */
  score: number;
  /** Where the photo falls: before the start, inside [start, end], or after the end. */
  side: "before" | "inside" | "after";
};

export type Rule = {
  name: string;
  /** Negative when a is the better candidate. */
  compare(a: Candidate, b: Candidate): number;
};

const byId = (a: Candidate, b: Candidate) => a.event.id - b.event.id;

/** A rule the service does not use, for comparison: time distance, then venue distance, then event id. */
export const TIME_FIRST: Rule = {
  name: "time distance first",
  compare: (a, b) => a.gapMs - b.gapMs || a.distanceM - b.distanceM || byId(a, b),
};

const ranked = (c: Candidate): Ranked => ({
  score: c.score,
  gap: c.gapMs,
  distance: c.distanceM,
  id: c.event.id,
});

/** docs/api.md §5, by the service's own definition (src/shards/score.ts). */
export const SCORE: Rule = {
  name: "distance/radius + time/padding",
  compare: (a, b) => {
    const first = ranked(a);
    if (ranksBefore(first.score, first.gap, first.distance, first.id, ranked(b))) return -1;
    const second = ranked(b);
    return ranksBefore(second.score, second.gap, second.distance, second.id, first) ? 1 : 0;
  },
};

export class CandidateFinder {
  private readonly grid = new Map<string, WorldVenue[]>();
  private readonly eventsByVenue = new Map<number, { events: WorldEvent[]; longestMs: number }>();
  private readonly beforeMs: number;
  private readonly afterMs: number;

  constructor(
    venues: readonly WorldVenue[],
    events: readonly WorldEvent[],
    private readonly settings: MatchSettings,
  ) {
    this.beforeMs = settings.beforeMinutes * MINUTE_MS;
    this.afterMs = settings.afterMinutes * MINUTE_MS;
    for (const venue of venues) {
      const key = this.key(Math.floor(venue.latitude / CELL_DEG), Math.floor(venue.longitude / CELL_DEG));
      const list = this.grid.get(key) ?? [];
      list.push(venue);
      this.grid.set(key, list);
    }
    for (const event of events) {
      const entry = this.eventsByVenue.get(event.venueId) ?? { events: [], longestMs: 0 };
      entry.events.push(event);
      entry.longestMs = Math.max(entry.longestMs, this.end(event) - event.startsAtMs);
      this.eventsByVenue.set(event.venueId, entry);
    }
    for (const entry of this.eventsByVenue.values()) entry.events.sort((a, b) => a.startsAtMs - b.startsAtMs);
  }

  private key(row: number, column: number): string {
    return `${row}:${column}`;
  }

  end(event: WorldEvent): number {
    return event.endsAtMs ?? event.startsAtMs + this.settings.defaultDurationMinutes * MINUTE_MS;
  }

  find(photo: MatchQuery): Candidate[] {
    const found: Candidate[] = [];
    const row = Math.floor(photo.latitude / CELL_DEG);
    const column = Math.floor(photo.longitude / CELL_DEG);
    for (let dr = -1; dr <= 1; dr++) {
      for (let dc = -1; dc <= 1; dc++) {
        for (const venue of this.grid.get(this.key(row + dr, column + dc)) ?? [])
          this.atVenue(photo, venue, found);
      }
    }
    return found;
  }

  private atVenue(photo: MatchQuery, venue: WorldVenue, found: Candidate[]) {
    // The same call and arithmetic as the engine, so scores compare bit for bit.
    const distanceM = haversineMeters(photo.latitude, photo.longitude, venue.latitude, venue.longitude);
    const radius = venue.radiusM ?? this.settings.radiusM;
    if (distanceM > radius) return;
    const entry = this.eventsByVenue.get(venue.id);
    if (entry === undefined) return;
    const t = photo.takenAtMs;
    const events = entry.events;
    // Last event starting by t + before; walk back while a window could still hold t.
    let low = 0;
    let high = events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((events[middle] as WorldEvent).startsAtMs <= t + this.beforeMs) low = middle + 1;
      else high = middle;
    }
    for (let i = low - 1; i >= 0; i--) {
      const event = events[i] as WorldEvent;
      if (event.startsAtMs < t - this.afterMs - entry.longestMs) break;
      const start = event.startsAtMs;
      const end = this.end(event);
      if (t < start - this.beforeMs || t > end + this.afterMs) continue;
      const distanceShare = distanceM / radius;
      const gapMs = timeGap(t, start, end);
      const score = candidateScore(distanceShare, t, start, end, this.beforeMs, this.afterMs);
      const side: Candidate["side"] = t < start ? "before" : t > end ? "after" : "inside";
      found.push({ event, venue, distanceM, radiusM: radius, distanceShare, gapMs, score, side });
    }
  }
}

/** The candidate a rule picks, or null. */
export function best(candidates: readonly Candidate[], rule: Rule): Candidate | null {
  let chosen: Candidate | null = null;
  for (const candidate of candidates)
    if (chosen === null || rule.compare(candidate, chosen) < 0) chosen = candidate;
  return chosen;
}
