/**
 * Catalog times are wall-clock times at the venue (`YYYY-MM-DDTHH:MM:SS`, no offset). Matching needs
 * instants, so each one is read in the venue's IANA zone with the rules of docs/api.md §5: a time that falls
 * in a DST gap moves forward by the length of the gap, and one that occurs twice in an overlap takes the
 * earlier instant. Temporal's "compatible" disambiguation is exactly that rule.
 */

import { type LocalDateTime, readDateTime, utcFields, utcMs } from "../../time/dateTime.ts";

export type { LocalDateTime } from "../../time/dateTime.ts";

/**
 * Parses the exact catalog shape, `YYYY-MM-DDTHH:MM:SS`, and checks that it names a real calendar date
 * and time of day in the years the API accepts for `taken_at` (docs/api.md §13). Returns null for
 * anything else (`2024-02-30`, hour 24, second 60, a trailing `Z`, fractions).
 */
export function parseLocalDateTime(text: string): LocalDateTime | null {
  return text.length === 19 ? readDateTime(text, "T") : null;
}

/** IANA names are letters, digits and `_+-` in slash-separated parts; offsets such as `+05:00` are not zones. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** Canonical spelling of every zone seen so far (null when unknown): a catalog repeats a few hundred zones. */
const zoneCache = new Map<string, string | null>();
const MAX_CACHED_ZONES = 10_000;

/**
 * Returns the zone's identifier as the time-zone database spells it (`america/new_york` becomes
 * `America/New_York`), or null when it is not an IANA zone the runtime knows.
 */
export function canonicalTimeZone(zone: string): string | null {
  const cached = zoneCache.get(zone);
  if (cached !== undefined) return cached;
  let canonical: string | null = null;
  if (ZONE_NAME.test(zone)) {
    try {
      canonical = new Temporal.PlainDateTime(2000, 1, 1).toZonedDateTime(zone).timeZoneId;
    } catch {
      canonical = null;
    }
  }
  // Bounded, so a file of endless distinct bogus names cannot grow it without limit.
  if (zoneCache.size < MAX_CACHED_ZONES) zoneCache.set(zone, canonical);
  return canonical;
}

function temporalInstant(local: LocalDateTime, zone: string): number {
  return new Temporal.PlainDateTime(
    local.year,
    local.month,
    local.day,
    local.hour,
    local.minute,
    local.second,
  ).toZonedDateTime(zone, { disambiguation: "compatible" }).epochMilliseconds;
}

const DAY_MS = 86_400_000;
/**
 * Wider than any change of UTC offset can be (offsets span UTC-12 to UTC+14, so at most 26 hours apart;
 * Samoa's 2011 jump over the date line was 24 hours).
 */
const MARGIN_MS = 2 * DAY_MS;

/**
 * The offset (local minus UTC, in ms) shared by every local time in [localStart, localEnd), or null when
 * a transition lies within MARGIN of that span. With no transition that close, each local time in the
 * span occurs exactly once and is `local - offset`: no gap, no overlap, nothing to disambiguate.
 */
function steadyOffset(zone: string, localStart: number, localEnd: number): number | null {
  const atLocal = (ms: number) => {
    return temporalInstant(utcFields(ms), zone);
  };
  const start = atLocal(localStart);
  const end = atLocal(localEnd);
  const next = Temporal.Instant.fromEpochMilliseconds(start - MARGIN_MS)
    .toZonedDateTimeISO(zone)
    .getTimeZoneTransition("next");
  if (next !== null && next.epochMilliseconds < end + MARGIN_MS) return null;
  return localStart - start;
}

type ZoneOffsets = { months: Map<number, number | null>; days: Map<number, number | null> };
const offsetsByZone = new Map<string, ZoneOffsets>();

/**
 * The instant (epoch milliseconds) of a valid local time in a valid zone, with the rules of docs/api.md §5.
 * Temporal is exact but costs microseconds per call once many zones are in play, and an import makes
 * millions of calls. So the offset is cached per zone and month when no transition comes near that
 * month, per day inside months that have one, and only times within two days of a transition go
 * through Temporal each time. All three paths give Temporal's answer (the tests compare them).
 */
export function instantOf(local: LocalDateTime, zone: string): number {
  let offsets = offsetsByZone.get(zone);
  if (offsets === undefined) {
    offsets = { months: new Map(), days: new Map() };
    offsetsByZone.set(zone, offsets);
  }
  const localMs = utcMs(local);
  const monthKey = local.year * 12 + local.month - 1;
  let monthOffset = offsets.months.get(monthKey);
  if (monthOffset === undefined) {
    monthOffset = steadyOffset(
      zone,
      Date.UTC(local.year, local.month - 1, 1),
      Date.UTC(local.year, local.month, 1),
    );
    offsets.months.set(monthKey, monthOffset);
  }
  if (monthOffset !== null) return localMs - monthOffset;
  const dayKey = Math.floor(localMs / DAY_MS);
  let dayOffset = offsets.days.get(dayKey);
  if (dayOffset === undefined) {
    dayOffset = steadyOffset(zone, dayKey * DAY_MS, (dayKey + 1) * DAY_MS);
    offsets.days.set(dayKey, dayOffset);
  }
  if (dayOffset !== null) return localMs - dayOffset;
  return temporalInstant(local, zone);
}

/** Convenience for callers holding the text form: null when the text or the zone is invalid. */
export function localTextToInstant(text: string, zone: string): number | null {
  const local = parseLocalDateTime(text);
  const canonical = canonicalTimeZone(zone);
  if (local === null || canonical === null) return null;
  return instantOf(local, canonical);
}
