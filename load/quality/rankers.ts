import type { Candidate } from "./candidates.ts";
import type { Photo, WorldEvent, WorldUser, WorldVenue } from "./world.ts";

/**
 * How the benchmark ranks the events of a history. A ranker sees what the service keeps: the user's
 * kept items (each with the candidate it matched) at the event, and all of the user's kept items
 * (for signals across events, such as photos from one spot on many days).
 */

export type KeptItem = { photo: Photo; candidate: Candidate };

export type Attendance = {
  user: WorldUser;
  event: WorldEvent;
  venue: WorldVenue;
  /** End of the event as matching uses it (the catalog's, or start + the default duration). */
  endMs: number;
  items: KeptItem[];
};

export type Ranker = {
  name: string;
  /**
   * Confidences of a user's attended events, by event id. Called once per user with every event in
   * the user's history, so a ranker can look across events.
   */
  rank(history: readonly Attendance[]): Map<number, number>;
};

/**
 * A stand-in until the service has a confidence: more kept items at an event, more likely the user
 * was there. Integer-valued, so many events tie and thresholds are coarse.
 */
export const ITEM_COUNT: Ranker = {
  name: "items at the event (stand-in)",
  rank: (history) => new Map(history.map((a) => [a.event.id, a.items.length])),
};
