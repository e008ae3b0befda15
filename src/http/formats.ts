import { FormatRegistry } from "@sinclair/typebox";
import { t } from "elysia";
import { characterLimitFormat } from "../store/text.ts";
import { documentedAs } from "./openapi/documentedAs.ts";

/**
 * What a `user_id` path parameter must look like (docs/api.md §2 step 5: "not a UUID" is malformed): the
 * 8-4-4-4-12 hexadecimal form, any case, whatever its version and variant bits. The API asks
 * for the UUID format, not for a version; an id of that form that no user has is a 404, not a 400.
 * The gate's router (gateRouter.ts) and the schemas' `uuid` format apply this same pattern, so which check
 * runs first cannot change the answer.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A string of at most `max` characters, counted as code points (see store/text.ts): a format, since
 * TypeBox's `maxLength` counts UTF-16 units. JSON Schema's `maxLength` counts code points, so the
 * OpenAPI document states the limit with it.
 */
export function limitedString(max: number, options: { minLength?: number; description?: string } = {}) {
  return documentedAs(t.String({ ...options, format: characterLimitFormat(max) }), {
    type: "string",
    ...options,
    maxLength: max,
  });
}

/**
 * How the OpenAPI document shows a query parameter the service matches as text: as the number or
 * boolean it stands for, with the default the handler applies when it is absent.
 */
type QueryDocumentation<T> = { default: T; description: string };

/** An `event_id` path parameter: a positive integer in plain decimal digits, of any size. */
export const POSITIVE_INTEGER = /^[1-9][0-9]*$/;

/** A whole number as a person writes it: no exponent, spaces, plus sign or leading zero. */
const PLAIN_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * A query parameter that must be an integer from `min` to `max` in plain decimal digits. Query values
 * are matched as text: the framework's number coercion would let `1e1`, `0x10`, ` 5` or `+5` through,
 * and a partner's typo deserves a 400, not a guess. A format rather than a pattern, so a failure can
 * tell an integer out of bounds (`range`) from text that is no integer (`type`): see `isOutOfRangeInteger`.
 */
export function integerText(min: number, max: number, shown: QueryDocumentation<number>) {
  const format = `integer-${min}-to-${max}`;
  if (!FormatRegistry.Has(format)) {
    FormatRegistry.Set(format, (value) => {
      const number = Number(value);
      return PLAIN_INTEGER.test(value) && number >= min && number <= max;
    });
  }
  const view = { type: "integer", minimum: min, maximum: max, ...shown };
  return documentedAs(t.String({ format, description: shown.description }), view);
}

/** A number as a person writes it: `PLAIN_INTEGER` with an optional fraction (`0.6`, `1.0`, `-0.5`). */
const PLAIN_DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** `integerText` for a number with an optional fraction (`min_confidence`): `1e-1` or `.5` is `type`. */
export function decimalText(min: number, max: number, shown: QueryDocumentation<number>) {
  const format = `decimal-${min}-to-${max}`;
  if (!FormatRegistry.Has(format)) {
    FormatRegistry.Set(format, (value) => {
      const number = Number(value);
      return PLAIN_DECIMAL.test(value) && number >= min && number <= max;
    });
  }
  const view = { type: "number", minimum: min, maximum: max, ...shown };
  return documentedAs(t.String({ format, description: shown.description }), view);
}

/** A query parameter that is `true` or `false` as written, nothing else (docs/api.md §7). */
export function booleanText(shown: QueryDocumentation<boolean>) {
  return documentedAs(t.Union([t.Literal("true"), t.Literal("false")]), { type: "boolean", ...shown });
}

/**
 * Whether `value`, refused by an `integerText` or `decimalText` format, is a number of that kind (so
 * out of bounds) at all.
 */
export function isOutOfRangeInteger(format: string | undefined, value: unknown): boolean {
  if (typeof value !== "string") return false;
  if (/^integer-\d+-to-\d+$/.test(format ?? "")) return PLAIN_INTEGER.test(value);
  return /^decimal-\d+-to-\d+$/.test(format ?? "") && PLAIN_DECIMAL.test(value);
}

/**
 * A domain label: letters of any script with their marks (internationalised names), digits, inner
 * hyphens. It starts with a letter or digit (a mark belongs to the character before it), and holds
 * no default-ignorable code point (variation selectors, fillers, joiners: invisible when printed).
 */
const VISIBLE = String.raw`(?!\p{Default_Ignorable_Code_Point})`;
const LABEL = String.raw`${VISIBLE}[\p{L}\p{Nd}](?:(?:${VISIBLE}[\p{L}\p{M}\p{Nd}-])*${VISIBLE}[\p{L}\p{M}\p{Nd}])?`;

/**
 * The local part is a run without whitespace, `@` or the characters that only a quoted or bracketed
 * address may hold (`<>()[]\,;:"`), which no partner's sign-up form produces; the domain is two or more
 * labels, so `a@b.c<script>`, `a@-.-` or `a@★.☆` are refused while `first.last+tag@mail.example` and
 * `ana@bücher.example` pass. Unicode-aware (the `u` flag), which a schema pattern cannot be: there a
 * label's "any letter" had to be a code-unit range that also took no-break spaces and symbols.
 */
const EMAIL_ADDRESS = new RegExp(String.raw`^[^\s@<>()[\]\\,;:"]+@${LABEL}(?:\.${LABEL})+$`, "u");

const MAX_EMAIL_CHARACTERS = 254;

/**
 * `local@domain.tld` once trimmed, at most 254 characters counted as code points (docs/api.md §3). Judged
 * after trimming, as it is stored: judged before, a trailing no-break space would pass as a letter of the last label
 * and then be trimmed away, leaving `a@x.` stored.
 */
function isEmailAddress(value: string): boolean {
  const email = value.trim();
  const fits = email.length <= MAX_EMAIL_CHARACTERS || [...email].length <= MAX_EMAIL_CHARACTERS;
  return fits && EMAIL_ADDRESS.test(email);
}

/** The schema format of a user's email (see `isEmailAddress`). */
export const EMAIL_ADDRESS_FORMAT = "email-address";

/**
 * Registers the string formats the schemas use. The framework registers checks of its own on import,
 * some of which cost every call (docs/performance.md §7: a `uuid` check is on every user path). Called
 * when the app is built, after every module has loaded, so no import order can register another check
 * for these names last.
 */
export function registerFormats(): void {
  FormatRegistry.Set("uuid", (value) => UUID.test(value));
  FormatRegistry.Set(EMAIL_ADDRESS_FORMAT, isEmailAddress);
}
