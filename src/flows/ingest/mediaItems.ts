import type { KeptMedia } from "../../store/ingest.ts";
import { parseRfc3339, type UtcInstant } from "../../time/dateTime.ts";

/**
 * An item of a batch as it passed the route's schema (`RequestMediaItem` in src/http/mediaSchema.ts),
 * null members already dropped as absent, handed to the per-item rules and matching: every member but
 * the id may be missing.
 */
export type ValidatedItem = {
  id: string;
  taken_at?: string;
  latitude?: number;
  longitude?: number;
  media_type?: "photo" | "video";
  filename?: string;
  duration_seconds?: number;
  thumbnail_url?: string;
  device_make?: string;
  device_model?: string;
  device_lens_model?: string;
};

/** docs/api.md §4: why an item of a valid batch was not ingested (the batch itself still answers 200). */
export type RejectionReason = "missing_taken_at" | "missing_coordinates" | "invalid";

/**
 * Which rule a rejected item broke, additive to its `reason` (docs/api.md §4): the specification's three
 * reasons stay as they are, and `invalid` alone covers five different mistakes.
 */
export const REJECTION_DETAILS = [
  "taken_at_missing",
  "latitude_missing",
  "longitude_missing",
  "taken_at_not_a_date_time",
  "taken_at_without_offset",
  "latitude_out_of_range",
  "longitude_out_of_range",
  "duplicate_id",
] as const;
export type RejectionDetail = (typeof REJECTION_DETAILS)[number];

export type Rejection = { id: string; reason: RejectionReason; detail: RejectionDetail };

/**
 * A capture instant resolved to UTC: epoch milliseconds (floored) and the fraction digits sent, up to
 * nanoseconds, which the store keeps to the microsecond.
 */
export type TakenAt = UtcInstant;

/**
 * An item that passed every per-item rule, with its capture instant resolved to UTC: what the store keeps
 * of a matched item, less the match itself.
 */
export type AcceptedItem = Omit<KeptMedia, "mediaId" | "eventId" | "venueId" | "takenAt"> & {
  id: string;
  takenAt: TakenAt;
};

export type ClassifiedBatch = { accepted: AcceptedItem[]; rejected: Rejection[] };

/** A `taken_at` is an RFC 3339 date-time of the years 1900 to 9999 (docs/api.md §13). */
export const parseTakenAt: (text: string) => TakenAt | null = parseRfc3339;

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

/** Why a `taken_at` that is no RFC 3339 date-time was refused: one that only lacks its offset says so. */
const takenAtFailure = (text: string): RejectionDetail =>
  parseTakenAt(`${text}Z`) === null ? "taken_at_not_a_date_time" : "taken_at_without_offset";

/** The `invalid` rule an item with a valid capture time breaks first, if any. */
function placeFailure(latitude: number, longitude: number, duplicate: boolean): RejectionDetail | null {
  if (!inRange(latitude, 90)) return "latitude_out_of_range";
  if (!inRange(longitude, 180)) return "longitude_out_of_range";
  return duplicate ? "duplicate_id" : null;
}

/**
 * Applies docs/api.md §4's per-item rules in their order (first that applies): missing_taken_at,
 * missing_coordinates, then invalid (taken_at, latitude, longitude, an id seen earlier in the batch).
 * "Seen earlier" counts every earlier item, rejected or not: the id is the deduplication key, and a
 * batch that repeats one is ambiguous about which version the partner meant.
 */
export function classifyItems(items: readonly ValidatedItem[]): ClassifiedBatch {
  const accepted: AcceptedItem[] = [];
  const rejected: Rejection[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const duplicate = seen.has(item.id);
    seen.add(item.id);
    const { taken_at, latitude, longitude } = item;
    if (taken_at === undefined) {
      rejected.push({ id: item.id, reason: "missing_taken_at", detail: "taken_at_missing" });
      continue;
    }
    if (latitude === undefined || longitude === undefined) {
      const detail = latitude === undefined ? "latitude_missing" : "longitude_missing";
      rejected.push({ id: item.id, reason: "missing_coordinates", detail });
      continue;
    }
    const takenAt = parseTakenAt(taken_at);
    if (takenAt === null) {
      rejected.push({ id: item.id, reason: "invalid", detail: takenAtFailure(taken_at) });
      continue;
    }
    const misplaced = placeFailure(latitude, longitude, duplicate);
    if (misplaced !== null) {
      rejected.push({ id: item.id, reason: "invalid", detail: misplaced });
      continue;
    }
    accepted.push({
      id: item.id,
      takenAt,
      latitude,
      longitude,
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
