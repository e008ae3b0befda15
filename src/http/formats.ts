import { FormatRegistry } from "@sinclair/typebox";

/**
 * What a `user_id` path parameter must look like (contract §2 step 5: "not a UUID" is malformed): the
 * 8-4-4-4-12 hexadecimal form, any case, whatever its version and variant bits. The specification asks
 * for the UUID format, not for a version; an id of that form that no user has is a 404, not a 400.
 * The gate (routes.ts) and the schemas' `uuid` format apply this same pattern, so which check runs first
 * cannot change the answer.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The most characters a media item's `id` may have (spec §8), counted as Unicode code points. */
export const MEDIA_ID_MAX_CHARACTERS = 255;

/**
 * The format of a media item's `id`: at most 255 characters. A schema's maxLength counts UTF-16 code
 * units, in which a character outside the Basic Multilingual Plane (an emoji) counts twice; only a
 * string longer than the bound in code units is counted again, by code points.
 */
export const MEDIA_ID_FORMAT = "media-id";

function withinMediaIdLength(value: string): boolean {
  return value.length <= MEDIA_ID_MAX_CHARACTERS || [...value].length <= MEDIA_ID_MAX_CHARACTERS;
}

/** An `event_id` path parameter: a positive integer in plain decimal digits, of any size. */
export const POSITIVE_INTEGER = /^[1-9][0-9]*$/;

/**
 * Registers the string formats the schemas use, once the OpenAPI plugin has loaded. On import the plugin
 * replaces TypeBox's format checks with ones that build a Zod schema on every call; for the `uuid` of every
 * user path that was about 2% of the server's CPU on ingest. Called when the app is built, after every module has loaded, so
 * no import order can register the plugin's checks last.
 */
export function registerFormats(): void {
  FormatRegistry.Set("uuid", (value) => UUID.test(value));
  FormatRegistry.Set(MEDIA_ID_FORMAT, withinMediaIdLength);
}
