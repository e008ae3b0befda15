import type { TSchema } from "@sinclair/typebox";

/** A JSON Schema as the OpenAPI document shows it. */
export type JsonSchema = { [keyword: string]: unknown };

const VIEW = Symbol("shown in the OpenAPI document as");
const NULL_READ_AS_ABSENT = Symbol("null shown as allowed in the OpenAPI document");

/**
 * Shows a checked schema in the OpenAPI document as `view`. Some checks cannot be written as JSON
 * Schema the way the service counts: a length in code points (TypeBox counts UTF-16 units, so the check
 * is a format), or a query value matched as text so `1e1` is refused (a format too). The document then
 * states the same rule in the keywords tools read (`maxLength`, `type: integer` with bounds); the symbol
 * keeps the view out of the checked schema, and survives the framework's copies of it.
 *
 * @example documentedAs(t.String({ format: "max-255-characters" }), { type: "string", maxLength: 255 })
 */
export function documentedAs<T extends TSchema>(schema: T, view: JsonSchema): T {
  return Object.assign(schema, { [VIEW]: view });
}

/**
 * Shows an optional member as also taking null, which the service reads as absent: the route drops such
 * nulls before checking the rest (a media item's optional members, docs/api.md §4).
 */
export function nullReadAsAbsent<T extends TSchema>(schema: T): T {
  return Object.assign(schema, { [NULL_READ_AS_ABSENT]: true });
}

/** The document's view of a checked schema, when it has one of its own. */
export function viewOf(schema: TSchema): JsonSchema | undefined {
  return (schema as { [VIEW]?: JsonSchema })[VIEW];
}

export function isNullReadAsAbsent(schema: TSchema): boolean {
  return (schema as { [NULL_READ_AS_ABSENT]?: boolean })[NULL_READ_AS_ABSENT] === true;
}
