import { FormatRegistry } from "@sinclair/typebox";

/**
 * What a string must be to be stored as sent, shared by the API's schemas and the catalog's: one rule
 * for its length, one for its content, so a name or an id is judged the same way whichever way it came.
 */

/**
 * The TypeBox format of a string of at most `max` characters, counted as Unicode code points, as the
 * documents state every limit. A schema's maxLength counts UTF-16 code units, in which a character
 * outside the Basic Multilingual Plane (an emoji) counts twice; only a string longer than `max` units
 * is counted again. Registered on first use, when the schema is built. The names are ours, so nothing
 * else that registers formats (the OpenAPI plugin sets the standard ones) replaces them.
 */
export function characterLimitFormat(max: number): string {
  const format = `max-${max}-characters`;
  if (!FormatRegistry.Has(format)) FormatRegistry.Set(format, (value) => fitsCharacters(value, max));
  return format;
}

/** Whether a string holds at most `max` characters, counted as code points (see `characterLimitFormat`). */
export function fitsCharacters(value: string, max: number): boolean {
  return value.length <= max || [...value].length <= max;
}

/** Whether a schema's format is a character limit (whose failure is a length, not a type, problem). */
export function isCharacterLimitFormat(format: string | undefined): boolean {
  return /^max-\d+-characters$/.test(format ?? "");
}

/**
 * The escapes that can put an unstorable string into parsed JSON: `\u0000`, and a surrogate (`\uD800`
 * to `\uDFFF`, hex digits in either case), unstorable when unpaired. Raw bytes carry neither (a raw
 * control character is invalid JSON, a surrogate invalid UTF-8), so JSON text without such an escape
 * needs no walk of its parsed value: on a 200-item batch a walk costs as much as the parse.
 */
const RISKY_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

export function mayHoldUnstorableString(jsonText: string): boolean {
  return RISKY_ESCAPE.test(jsonText);
}

/**
 * Whether PostgreSQL would not store a string as sent: it refuses U+0000, and turns an unpaired
 * surrogate into U+FFFD, so two different ids would become one.
 */
export function isUnstorableString(value: string): boolean {
  return value.includes("\u0000") || !value.isWellFormed();
}

/**
 * Whether a parsed JSON value nests arrays and objects more than `limit` levels deep. Only containers
 * are visited, at most `limit` deep, so a 200-item batch takes microseconds and a body of 25,000
 * nested arrays is refused at once, before anything recursive (schema checks, error reports, the walk
 * below) reaches its bottom: the framework's report of a failed check of such a body grew to gigabytes.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  // Plain loops that skip primitives without a call: much faster than Object.values and some().
  if (Array.isArray(value)) {
    for (const member of value) {
      if (typeof member === "object" && member !== null && nestsDeeperThan(member, limit - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (typeof member === "object" && member !== null && nestsDeeperThan(member, limit - 1)) return true;
  }
  return false;
}

/** A place in a parsed JSON value: member names and array indexes from the top. */
export type JsonPath = (string | number)[];

/**
 * The JSON path of every unstorable string in a parsed value, member names included (the path of a
 * malformed name ends with that name), in document order.
 */
export function unstorableStringPaths(
  value: unknown,
  path: JsonPath = [],
  found: JsonPath[] = [],
): JsonPath[] {
  if (typeof value === "string") {
    if (isUnstorableString(value)) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((element, i) => {
      unstorableStringPaths(element, [...path, i], found);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, member] of Object.entries(value)) {
      if (isUnstorableString(key)) found.push([...path, key]);
      else unstorableStringPaths(member, [...path, key], found);
    }
  }
  return found;
}
