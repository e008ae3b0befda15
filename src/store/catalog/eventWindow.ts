import { instantOf, type LocalDateTime } from "./localTime.ts";

/**
 * An event's instants from its local start and end in its venue's zone (docs/operations.md §3), one rule
 * for the import and for a venue's change of zone. An event whose date is known and whose time is not
 * (`time_unknown`) spans the venue's whole local day: from 00:00 of its date to 24:00 of its last day
 * (its end's date, else its start's), so the index matches it over those days with the usual padding.
 */

const DAY_MS = 86_400_000;

export type EventInstants = { startsMs: number; endsMs: number | null };

/** Midnight at the start of the local day `days` after `local`'s date. */
function midnight(local: LocalDateTime, days: number): LocalDateTime {
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day) + days * DAY_MS);
  return {
    ...local,
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: 0,
    minute: 0,
    second: 0,
  };
}

export function eventInstants(
  starts: LocalDateTime,
  ends: LocalDateTime | null,
  timeUnknown: boolean,
  zone: string,
): EventInstants {
  if (!timeUnknown) {
    return { startsMs: instantOf(starts, zone), endsMs: ends === null ? null : instantOf(ends, zone) };
  }
  return {
    startsMs: instantOf(midnight(starts, 0), zone),
    endsMs: instantOf(midnight(ends ?? starts, 1), zone),
  };
}

/** The local start a time-unknown event is stored with: its date at 00:00:00. */
export function startOfLocalDay(startsAtLocal: string): string {
  return `${startsAtLocal.slice(0, 10)}T00:00:00`;
}
