import type { ItemPlace } from "../confidence/confidence.ts";

/**
 * The boundary between the partner API and the matching engine. The API hands over validated items and
 * gets back, for each one in the same order, the best candidate event of docs/api.md §5 or null.
 */

export type MatchQuery = {
  latitude: number;
  longitude: number;
  /** Capture instant in epoch milliseconds (UTC). */
  takenAtMs: number;
};

/** The best candidate for an item. The API reports it as a match only when the event is licensed. */
export type Candidate = {
  eventId: number;
  venueId: number;
  licensed: boolean;
};

/** A candidate as the matcher answers it, with where the item fell against it. */
export type PlacedCandidate = Candidate & {
  /** The parts of the item's score against this event: what its confidence weighs (src/confidence). */
  place: ItemPlace;
  /** The venue's centre and the radius that applied: where the item's routine spot is measured from. */
  venue: { latitude: number; longitude: number; radiusM: number };
};

export interface Matcher {
  /** Answers are positionally aligned with the queries. */
  match(queries: readonly MatchQuery[]): Promise<(PlacedCandidate | null)[]>;
  /** The catalog version (catalog_state) new matches run on; "0" before the first import. */
  version(): string;
  close(): Promise<void>;
}

/** The match window settings of docs/api.md §5 (MATCH_* variables). */
export type MatchSettings = {
  radiusM: number;
  beforeMinutes: number;
  afterMinutes: number;
  defaultDurationMinutes: number;
};

/** A venue as the engine needs it. */
export type IndexVenue = {
  id: number;
  latitude: number;
  longitude: number;
  /** Null: MatchSettings.radiusM applies. */
  radiusM: number | null;
};

/** An event as the engine needs it: instants already resolved from local time in the venue's zone. */
export type IndexEvent = {
  id: number;
  venueId: number;
  startsAtMs: number;
  /** Null: start + MatchSettings.defaultDurationMinutes. */
  endsAtMs: number | null;
  licensed: boolean;
};
