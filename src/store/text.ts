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
  if (!FormatRegistry.Has(format)) {
    FormatRegistry.Set(format, (value) => value.length <= max || [...value].length <= max);
  }
  return format;
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

/** The JSON path of the first unstorable string in a parsed value, or null. */
export function findUnstorableString(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | null {
  if (typeof value === "string") return isUnstorableString(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableString(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, member] of Object.entries(value)) {
      const found = findUnstorableString(member, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
