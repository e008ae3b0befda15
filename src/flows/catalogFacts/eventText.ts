import type { AttendedEvent, EventFacts, PerformerDetail, VenueDetail } from "../../store/eventDetails.ts";

/**
 * The members of an event of docs/api.md §4 that every user's history shows alike, as the wire writes
 * them. The route's response schema (`EventBody` in src/http/eventMappers.ts) documents the same
 * members; the text is built here because the facts cache keeps it rendered (docs/architecture.md §9).
 */
type VenueMembers = {
  id: number;
  name: string;
  city: string | null;
  region: string | null;
  country: string | null;
  latitude: number | null;
  longitude: number | null;
};

type PerformerMembers = {
  id: number;
  name: string;
  category: string | null;
  image_url: string | null;
  is_headliner: boolean | null;
};

type EventFactsMembers = {
  id: number;
  name: string;
  starts_at_local: string;
  /** Present, and true, only when the date is known and the time is not (docs/api.md §4). */
  time_unknown?: true;
  venue: VenueMembers;
  performers: PerformerMembers[];
};

function venueMembers(venue: VenueDetail): VenueMembers {
  return {
    id: venue.id,
    name: venue.name,
    city: venue.city,
    region: venue.region,
    country: venue.country,
    latitude: venue.latitude,
    longitude: venue.longitude,
  };
}

function performerMembers(performer: PerformerDetail): PerformerMembers {
  return {
    id: performer.id,
    name: performer.name,
    category: performer.category,
    image_url: performer.imageUrl,
    is_headliner: performer.isHeadliner,
  };
}

function eventFactsMembers(event: EventFacts): EventFactsMembers {
  return {
    id: event.id,
    name: event.name,
    starts_at_local: event.startsAtLocal,
    ...(event.timeUnknown ? { time_unknown: true as const } : {}),
    venue: venueMembers(event.venue),
    performers: event.performers.map(performerMembers),
  };
}

/**
 * An event's facts as JSON text without its closing brace, for `eventText` to finish: the part of an
 * event every user's history shows alike, and what the server caches (`EventFactsCache`).
 */
export function eventFactsText(facts: EventFacts): string {
  return JSON.stringify(eventFactsMembers(facts)).slice(0, -1);
}

/**
 * The event of docs/api.md §4 as JSON text: the facts, the user's `media_count` and `confidence` (stored
 * in hundredths: n / 100 prints as the two-decimal number), then `media` exactly when
 * the attended event carries a list. The list is the wire-format JSON the database keeps (`mediaListJson`
 * in src/store/eventDetails.ts) and goes in as it is: parsing and re-encoding a page's few hundred items
 * was most of the server's time on a history page.
 */
export function eventText(factsText: string, attended: AttendedEvent): string {
  const media = attended.mediaJson === null ? "" : `,"media":${attended.mediaJson}`;
  const confidence = attended.confidence === null ? "null" : String(attended.confidence / 100);
  return `${factsText},"media_count":${attended.mediaCount},"confidence":${confidence}${media}}`;
}
