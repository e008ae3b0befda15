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
 * an offset that is `Z`/`z` or numeric with a colon. Temporal parses far more (basic format, minutes
 * without seconds, bracketed annotations), so the shape is pinned here first.
 */
const RFC3339 = /^(\d{4})-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const MIN_YEAR = 1900;
const MAX_YEAR = 9999;

/**
 * The UTC instant of an RFC 3339 `taken_at`, or null when it is not a real date-time (contract §1).
 * Temporal rejects impossible dates (`2024-02-30`) and hour 24 itself, but reads second 60 as 59, so a
 * leap second is refused here: the contract wants it invalid rather than silently moved.
 */
export function parseTakenAt(text: string): { iso: string; ms: number } | null {
  const shape = RFC3339.exec(text);
  if (shape === null) return null;
  const [, year, second, offsetHours, offsetMinutes] = shape;
  if (Number(year) < MIN_YEAR || Number(year) > MAX_YEAR || Number(second) > 59) return null;
  if (offsetHours !== undefined && (Number(offsetHours) > 23 || Number(offsetMinutes) > 59)) return null;
  try {
    const instant = Temporal.Instant.from(text);
    return { iso: instant.toString(), ms: instant.epochMilliseconds };
  } catch {
    return null;
  }
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
