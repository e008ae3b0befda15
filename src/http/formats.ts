import { FormatRegistry } from "@sinclair/typebox";

/**
 * The UUID check of `user_id` path parameters, as the schemas were tested with: RFC 9562 versions 1-8
 * with the RFC variant, plus the nil and max UUIDs.
 */
const UUID =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;

/**
 * Registers the string formats the schemas use, once the OpenAPI plugin has loaded. On import the plugin
 * replaces TypeBox's format checks with ones that build a Zod schema on every call; for the `uuid` of every
 * user path that was about 2% of the server's CPU on ingest. The pattern is the one that check applies,
 * so what is accepted does not change. Called when the app is built, after every module has loaded, so
 * no import order can register the plugin's checks last.
 */
export function registerFormats(): void {
  FormatRegistry.Set("uuid", (value) => UUID.test(value));
}
