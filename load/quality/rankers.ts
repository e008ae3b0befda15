import {
  CONFIDENCE,
  type ConfidenceParameters,
  itemPlace,
  spotCell,
} from "../../src/confidence/confidence.ts";
import type { MatchSettings } from "../../src/shards/matcher.ts";
import { type EventItem, eventConfidence, routineFlags } from "../../test/support/confidenceModel.ts";
import type { Candidate } from "./candidates.ts";
import type { Photo, WorldEvent, WorldUser, WorldVenue } from "./worldModel.ts";

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

/**
 * The service's confidence as min_confidence would see it (two decimals), by the model the store is held
 * to (test/support/confidenceModel.ts), from the kept items as stored and the catalog's facts, routine
 * spots found per venue over the whole history.
 */
export function confidenceRanker(
  settings: MatchSettings,
  parameters: ConfidenceParameters = CONFIDENCE,
  name = "confidence",
): Ranker {
  return {
    name,
    rank(history) {
      const byVenue = new Map<number, KeptItem[]>();
      for (const attendance of history) {
        const list = byVenue.get(attendance.venue.id) ?? [];
        list.push(...attendance.items);
        byVenue.set(attendance.venue.id, list);
      }
      const routine = new Set<KeptItem>();
      for (const items of byVenue.values()) {
        const { venue, radiusM } = (items[0] as KeptItem).candidate;
        const flags = routineFlags(
          items.map(({ photo, candidate }) => ({
            eventId: candidate.event.id,
            latitude: photo.latitude,
            longitude: photo.longitude,
          })),
          { latitude: venue.latitude, longitude: venue.longitude, radiusM },
          parameters,
        );
        items.forEach((item, i) => {
          if (flags[i]) routine.add(item);
        });
      }
      return new Map(
        history.map((a) => {
          const items: EventItem[] = a.items.map((item) => {
            const { venue, radiusM } = item.candidate;
            const core = { latitude: venue.latitude, longitude: venue.longitude, radiusM };
            return {
              ...itemPlace(item.photo, a.venue, a.event, settings),
              takenAtMs: item.photo.takenAtMs,
              inCore: spotCell(item.photo, core, parameters).inCore,
              routine: routine.has(item),
            };
          });
          return [a.event.id, eventConfidence(items, a.event.startsAtMs, a.endMs, parameters)];
        }),
      );
    },
  };
}
