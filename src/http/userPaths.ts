import { t } from "elysia";
import { POSITIVE_INTEGER } from "./formats.ts";
import { documentedAs } from "./openapi/documentedAs.ts";

/** Path parameters of user-scoped routes. The gate already refused malformed ones (docs/api.md §2 step 5). */
export const UserPath = t.Object({ user_id: t.String({ format: "uuid" }) });

/**
 * The event id stays text: any positive integer is well-formed (the gate checked the same pattern), and
 * one beyond the catalog's id range, which a number could not even hold exactly, names no event.
 */
export const UserEventPath = t.Object({
  user_id: t.String({ format: "uuid" }),
  event_id: documentedAs(t.String({ pattern: POSITIVE_INTEGER.source, description: "A positive integer" }), {
    type: "integer",
    minimum: 1,
    description: "The event's id, as the history and batch answers give it",
  }),
});

/** The largest catalog id (ids are PostgreSQL integers); a larger event id names no event. */
const LARGEST_EVENT_ID = 2_147_483_647;

/** The catalog id an `event_id` path parameter names, or null when it is past every catalog id. */
export function catalogEventId(eventIdParam: string): number | null {
  const id = Number(eventIdParam);
  return id <= LARGEST_EVENT_ID ? id : null;
}

/**
 * `parse` option of routes with a JSON body. The gate has parsed the body already (app.ts hands it over
 * in onParse); naming the parser is what makes the OpenAPI document list the body as application/json.
 */
export const JSON_BODY = "json" as const;
