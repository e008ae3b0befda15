import type { KeptMedia } from "../store/ingest.ts";
import type { MediaItem } from "./mediaSchema.ts";

/** Contract §4: why an item of a valid batch was not ingested (the batch itself still answers 200). */
export type RejectionReason = "missing_taken_at" | "missing_coordinates" | "invalid";

export type Rejection = { id: string; reason: RejectionReason };

/**
 * An item that passed every per-item rule, with its capture instant resolved to UTC: what the store keeps
 * of a matched item, less the match itself (`takenAt` keeps the precision sent, up to nanoseconds).
 */
export type AcceptedItem = Omit<KeptMedia, "mediaId" | "eventId" | "venueId"> & {
  id: string;
  takenAtMs: number;
};

export type ClassifiedBatch = { accepted: AcceptedItem[]; rejected: Rejection[] };

/**
 * RFC 3339 `date-time` (section 5.6): `T`, `t` or a space between date and time, optional fraction, and
 * an offset that is `Z`/`z` or numeric with a colon.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const MIN_YEAR = 1900;
const MAX_YEAR = 9999;
const MINUTE_MS = 60_000;
/** A late offset can carry 9999-12-31 past the last year PostgreSQL reads in the four-digit form. */
const END_OF_YEAR_9999 = Date.UTC(10_000, 0, 1);

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * The UTC instant of an RFC 3339 `taken_at`, or null when it is not a real date-time (contract §1):
 * impossible dates (`2024-02-30`), hour 24 and leap second 60 are refused. Computed by hand rather than
 * with Temporal, which cost a quarter of a 200-item batch's classification; a property test holds it to
 * Temporal's answers. Milliseconds are floored, as Temporal's `epochMilliseconds`; `iso` keeps every
 * fraction digit sent (an offset is whole minutes, so moving to UTC never touches the fraction).
 */
export function parseTakenAt(text: string): { iso: string; ms: number } | null {
  const parts = RFC3339.exec(text);
  if (parts === null) return null;
  const [, y, mo, d, h, mi, s, fraction, sign, offsetH, offsetM] = parts;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const hours = Number(offsetH);
    const minutes = Number(offsetM);
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (sign === "-" ? -1 : 1) * (hours * 60 + minutes);
  }
  const wholeSeconds = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * MINUTE_MS;
  if (wholeSeconds >= END_OF_YEAR_9999) return null;
  const digits = fraction ?? "";
  const iso = new Date(wholeSeconds).toISOString().slice(0, 19);
  return {
    iso: digits === "" ? `${iso}Z` : `${iso}.${digits}Z`,
    ms: wholeSeconds + Number(digits.padEnd(3, "0").slice(0, 3)),
  };
}

const inRange = (value: number, limit: number) => value >= -limit && value <= limit;

/**
 * Applies contract §4's per-item rules in their order (first that applies): missing_taken_at,
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
      takenAt: takenAt.iso,
      takenAtMs: takenAt.ms,
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
