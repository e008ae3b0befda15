/**
 * Dates and times read from text: the API's `taken_at` (RFC 3339) and the catalog's wall-clock times
 * share one reading of the calendar, so a date one of them refuses the other refuses too. Imports
 * nothing, so every layer may use it.
 *
 * Read character by character: this runs for every item of a batch and every event of a ten-million-line
 * import, where a regular expression or Temporal costs more than the rest of the work on the value.
 */

/** The years a date may fall in, as written (docs/api.md §13; the catalog applies the same bounds). */
const MIN_YEAR = 1900;
const MAX_YEAR = 9999;

const MINUTE_MS = 60_000;
/** A late offset can carry 9999-12-31 past the last year PostgreSQL reads in the four-digit form. */
const END_OF_YEAR_9999 = Date.UTC(10_000, 0, 1);

/** A calendar date and time of day, without a zone. */
export type LocalDateTime = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
};

/**
 * An RFC 3339 instant resolved to UTC: epoch milliseconds (floored, what matching and a JavaScript Date
 * use) and the fraction digits sent, up to nanoseconds.
 */
export type UtcInstant = { ms: number; fraction: string };

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
 * The date and time of day written `YYYY-MM-DD?HH:MM:SS` at the start of `text` (its first 19
 * characters), `?` being one of `separators`; null unless it names a real calendar date and time of day
 * in the years MIN_YEAR to MAX_YEAR: `2024-02-30`, hour 24 and second 60 are refused, so a typo is
 * reported instead of rolling over into another day.
 */
export function readDateTime(text: string, separators: string): LocalDateTime | null {
  if (text[4] !== "-" || text[7] !== "-" || text[13] !== ":" || text[16] !== ":") return null;
  const separator = text[10];
  if (separator === undefined || !separators.includes(separator)) return null;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23) return null;
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  return { year, month, day, hour, minute, second };
}

/**
 * The UTC instant of an RFC 3339 `date-time` (section 5.6), or null when it is not one or not a real
 * date-time (docs/api.md §13): `T`, `t` or a space between date and time, an optional fraction of 1 to 9
 * digits, and `Z`/`z` or a numeric offset with a colon; the date and time as `readDateTime` judges them,
 * and the instant before the year 10000. A property test (test/taken-at.test.ts) holds it to Temporal's
 * answers, on well-formed and mangled strings. Milliseconds are floored, as Temporal's `epochMilliseconds`;
 * an offset is whole minutes, so moving to UTC never touches the fraction.
 */
export function parseRfc3339(text: string): UtcInstant | null {
  const local = readDateTime(text, "Tt ");
  if (local === null) return null;
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
  const wholeSeconds = utcMs(local) - offsetMinutes * MINUTE_MS;
  if (wholeSeconds >= END_OF_YEAR_9999) return null;
  return { ms: wholeSeconds + Number(fraction.slice(0, 3).padEnd(3, "0")), fraction };
}

/** The epoch milliseconds of a date and time read as UTC. */
export function utcMs(local: LocalDateTime): number {
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
}

/** The date and time of day, in UTC, of an instant in epoch milliseconds (the milliseconds dropped). */
export function utcFields(ms: number): LocalDateTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}
