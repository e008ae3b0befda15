import type { KeptMedia } from "../store/ingest.ts";
import type { MediaItem } from "./mediaSchema.ts";

/** docs/api.md §4: why an item of a valid batch was not ingested (the batch itself still answers 200). */
export type RejectionReason = "missing_taken_at" | "missing_coordinates" | "invalid";

export type Rejection = { id: string; reason: RejectionReason };

/**
 * A capture instant resolved to UTC: epoch milliseconds (floored, what matching and a JavaScript Date
 * use) and the fraction digits sent, up to nanoseconds, which the store keeps to the microsecond.
 */
export type TakenAt = { ms: number; fraction: string };

/**
 * An item that passed every per-item rule, with its capture instant resolved to UTC: what the store keeps
 * of a matched item, less the match itself.
 */
export type AcceptedItem = Omit<KeptMedia, "mediaId" | "eventId" | "venueId" | "takenAt"> & {
  id: string;
  takenAt: TakenAt;
};

export type ClassifiedBatch = { accepted: AcceptedItem[]; rejected: Rejection[] };

const MIN_YEAR = 1900;
const MAX_YEAR = 9999;
const MINUTE_MS = 60_000;
/** A late offset can carry 9999-12-31 past the last year PostgreSQL reads in the four-digit form. */
const END_OF_YEAR_9999 = Date.UTC(10_000, 0, 1);

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const ZERO = 48;

/** The value of `count` ASCII digits at `at`, or -1 when one of them is not a digit (or is past the end). */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (!(digit >= 0 && digit <= 9)) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Where the run of digits starting at `at` ends. */
function endOfDigits(text: string, at: number): number {
  let end = at;
  while (digitsAt(text, end, 1) >= 0) end++;
  return end;
}

/**
 * The UTC instant of an RFC 3339 `date-time` (section 5.6), or null when it is not one or not a real
 * date-time (docs/api.md §13): `T`, `t` or a space between date and time, an optional fraction of 1 to 9
 * digits, and `Z`/`z` or a numeric offset with a colon; impossible dates (`2024-02-30`), hour 24 and
 * leap second 60 are refused. Read character by character: a regular expression and Temporal each cost
 * more than the rest of an item's classification. A property test holds it to Temporal's answers, on
 * well-formed and mangled strings. Milliseconds are floored, as Temporal's `epochMilliseconds`; an offset
 * is whole minutes, so moving to UTC never touches the fraction.
 */
export function parseTakenAt(text: string): TakenAt | null {
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  const separator = text[10];
  if (text[4] !== "-" || text[7] !== "-" || text[13] !== ":" || text[16] !== ":") return null;
  if (separator !== "T" && separator !== "t" && separator !== " ") return null;
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23) return null;
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let at = 19;
  let fraction = "";
  if (text[at] === ".") {
    const end = endOfDigits(text, at + 1);
    if (end === at + 1 || end > at + 10) return null;
    fraction = text.slice(at + 1, end);
    at = end;
  }
  let offsetMinutes = 0;
  const zone = text[at];
  if (zone === "+" || zone === "-") {
    const hours = digitsAt(text, at + 1, 2);
    const minutes = digitsAt(text, at + 4, 2);
    if (text[at + 3] !== ":" || hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return null;
    offsetMinutes = (zone === "-" ? -1 : 1) * (hours * 60 + minutes);
    at += 6;
  } else if (zone === "Z" || zone === "z") {
    at += 1;
  } else {
    return null;
  }
  if (at !== text.length) return null;
  const wholeSeconds = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * MINUTE_MS;
  if (wholeSeconds >= END_OF_YEAR_9999) return null;
  return { ms: wholeSeconds + Number(fraction.slice(0, 3).padEnd(3, "0")), fraction };
}

/**
 * The instant the matcher compares with window bounds, in milliseconds. The bounds are whole
 * milliseconds (catalog times have whole seconds), so an instant with a remainder below the millisecond
 * lies strictly between two of them: half a millisecond above its floor keeps it after a bound it
 * passes by 100 ns (a window's end) and before the next one, where the floor alone would put it on
 * the bound and inside the window.
 */
export function matchInstantMs({ ms, fraction }: TakenAt): number {
  return fraction.length > 3 && Number(fraction.slice(3)) > 0 ? ms + 0.5 : ms;
}

/** The store keeps microseconds. */
const STORED_FRACTION_DIGITS = 6;

/**
 * The instant as RFC 3339 UTC text, floored to the microsecond the store keeps. Handed more digits,
 * PostgreSQL would round them, and `…23:59:59.9999999Z` would become the next second, day or year (a
 * five-digit year after 9999-12-31), unlike the floored milliseconds of every response. Built only for
 * the items a batch keeps (a few in a hundred): formatting every accepted item cost more than parsing it.
 */
export function utcText({ ms, fraction }: TakenAt): string {
  const whole = new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
  const stored = fraction.slice(0, STORED_FRACTION_DIGITS);
  return stored === "" ? `${whole}Z` : `${whole}.${stored}Z`;
}

const inRange = (value: number, limit: number) => value >= -limit && value <= limit;

/**
 * Applies docs/api.md §4's per-item rules in their order (first that applies): missing_taken_at,
 * missing_coordinates, then invalid (taken_at, latitude, longitude, an id seen earlier in the batch).
 * "Seen earlier" counts every earlier item, rejected or not: the id is the deduplication key, and a
 * batch that repeats one is ambiguous about which version the partner meant.
 */
export function classifyItems(items: readonly MediaItem[]): ClassifiedBatch {
  const accepted: AcceptedItem[] = [];
  const rejected: Rejection[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const duplicate = seen.has(item.id);
    seen.add(item.id);
    if (item.taken_at === undefined) {
      rejected.push({ id: item.id, reason: "missing_taken_at" });
      continue;
    }
    if (item.latitude === undefined || item.longitude === undefined) {
      rejected.push({ id: item.id, reason: "missing_coordinates" });
      continue;
    }
    const takenAt = parseTakenAt(item.taken_at);
    if (takenAt === null || !inRange(item.latitude, 90) || !inRange(item.longitude, 180) || duplicate) {
      rejected.push({ id: item.id, reason: "invalid" });
      continue;
    }
    accepted.push({
      id: item.id,
      takenAt,
      latitude: item.latitude,
      longitude: item.longitude,
      mediaType: item.media_type ?? "photo",
      filename: item.filename ?? null,
      durationSeconds: item.duration_seconds ?? null,
      thumbnailUrl: item.thumbnail_url ?? null,
      deviceMake: item.device_make ?? null,
      deviceModel: item.device_model ?? null,
      deviceLensModel: item.device_lens_model ?? null,
    });
  }
  return { accepted, rejected };
}
