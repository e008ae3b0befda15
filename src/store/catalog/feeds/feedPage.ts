import tzLookup from "@photostructure/tz-lookup";
import type { EventStatus } from "../eventStatus.ts";
import { canonicalTimeZone } from "../localTime.ts";

/**
 * What one answer page of a provider's event search holds once read (docs/operations.md §3, *Feeds*):
 * venues, performers and events keyed by the provider's string ids, before they are given integer ids.
 * The readers (ticketmaster.ts, seatgeek.ts) are pure: a page in, this out.
 */

export const FEED_SOURCES = ["ticketmaster", "seatgeek"] as const;
export type FeedSource = (typeof FEED_SOURCES)[number];

export type FeedVenue = {
  key: string;
  name: string;
  city: string | null;
  region: string | null;
  country: string | null;
  latitude: number;
  longitude: number;
  timezone: string;
};

export type FeedPerformer = { key: string; name: string; category: string | null; imageUrl: string | null };

export type FeedEvent = {
  key: string;
  name: string;
  venueKey: string;
  /** `YYYY-MM-DDTHH:MM:SS` at the venue; 00:00:00 when the time is unknown. */
  startsAtLocal: string;
  endsAtLocal: string | null;
  status: EventStatus;
  timeUnknown: boolean;
  performers: { key: string; isHeadliner: boolean | null }[];
  /** Where the event is in the operator's files, for reports. */
  place: string;
};

/**
 * An event the page names without a date (Ticketmaster's date to be announced, often a postponed show):
 * the import applies its status to the stored event, keeping the stored times, or skips it when unknown.
 */
export type UndatedEvent = Omit<FeedEvent, "startsAtLocal" | "endsAtLocal" | "timeUnknown">;

/** Something of a page left out (a venue without coordinates and its events), with its place. */
export type FeedNotice = { place: string; message: string };

export type FeedPage = {
  venues: FeedVenue[];
  performers: FeedPerformer[];
  events: FeedEvent[];
  undated: UndatedEvent[];
  skipped: FeedNotice[];
};

/** A page that is not such an answer: nothing of the import is applied. */
export class NotAnAnswer extends Error {
  constructor(
    readonly place: string,
    readonly detail: string,
  ) {
    super(`${place}: ${detail}`);
  }
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function memberAt(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

export function objectAt(value: unknown, key: string): JsonObject | null {
  if (!isObject(value)) return null;
  const member = value[key];
  return isObject(member) ? member : null;
}

export function arrayAt(value: unknown, key: string): unknown[] {
  if (!isObject(value)) return [];
  const member = value[key];
  return Array.isArray(member) ? member : [];
}

/** A non-empty string member, trimmed; numbers are taken as their text (ids). */
export function textAt(value: unknown, key: string): string | null {
  if (!isObject(value)) return null;
  const member = value[key];
  if (typeof member === "number" && Number.isFinite(member)) return String(member);
  if (typeof member !== "string") return null;
  const trimmed = member.trim();
  return trimmed.length === 0 ? null : trimmed;
}

export function flagAt(value: unknown, key: string): boolean {
  return isObject(value) && value[key] === true;
}

/** A provider's id: a string (Ticketmaster) or a number (SeatGeek), always kept as text. */
export function requiredId(value: unknown, place: string): string {
  const id = textAt(value, "id");
  if (id === null) throw new NotAnAnswer(place, `id: expected a string or a number`);
  return id;
}

export function requiredName(value: unknown, key: string, place: string): string {
  const name = textAt(value, key);
  if (name === null) throw new NotAnAnswer(place, `${key}: expected a non-empty string`);
  return name;
}

/** A coordinate as number or numeric string (Ticketmaster sends strings); null when absent or out of range. */
export function coordinate(value: unknown, limit: number): number | null {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isFinite(number) || Math.abs(number) > limit) return null;
  return number;
}

/** Whether a point is usable: present, in range, and not the (0, 0) that stands for "unknown". */
export function usablePoint(latitude: number | null, longitude: number | null): boolean {
  return latitude !== null && longitude !== null && !(latitude === 0 && longitude === 0);
}

/**
 * The venue's zone: the feed's when it names one the runtime knows, else the zone whose boundaries hold
 * the venue's point, from the boundary data the tz-lookup package ships (no network).
 */
export function venueZone(feedZone: string | null, latitude: number, longitude: number): string {
  const named = feedZone === null ? null : canonicalTimeZone(feedZone);
  return named ?? canonicalTimeZone(tzLookup(latitude, longitude)) ?? "UTC";
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{2}:\d{2}(:\d{2})?$/;

/** `YYYY-MM-DD` and `HH:MM[:SS]` joined as a catalog local time; null when the date is not in that shape. */
export function localDateTime(date: string | null, time: string | null): string | null {
  if (date === null || !DATE.test(date)) return null;
  if (time === null || !TIME.test(time)) return `${date}T00:00:00`;
  return `${date}T${time.length === 5 ? `${time}:00` : time}`;
}

/**
 * An instant a feed writes in UTC (`Z`, an offset, or none at all, as SeatGeek's `enddatetime_utc`) as
 * the local date-time at the venue, to the second; null when unreadable.
 */
export function localOfInstant(text: string | null, zone: string): string | null {
  if (text === null) return null;
  try {
    const instant = Temporal.Instant.from(/[zZ]|[+-]\d{2}:\d{2}$/.test(text) ? text : `${text}Z`);
    return instant.toZonedDateTimeISO(zone).toPlainDateTime().toString({ smallestUnit: "second" });
  } catch {
    return null;
  }
}
