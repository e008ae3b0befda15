import { t } from "elysia";

/** Path parameters of user-scoped routes. The gate already refused malformed ones (contract §2 step 5). */
export const UserPath = t.Object({ user_id: t.String({ format: "uuid" }) });

/** elysia's `t.Integer` turns the path segment into a number; the gate admitted only positive int32 digits. */
export const UserEventPath = t.Object({
  user_id: t.String({ format: "uuid" }),
  event_id: t.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

/**
 * `parse` option of routes with a JSON body. The gate has parsed the body already (app.ts hands it over
 * in onParse); naming the parser is what makes the OpenAPI document list the body as application/json.
 */
export const JSON_BODY = "json" as const;
