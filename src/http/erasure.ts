import { t } from "elysia";
import { eraseUser } from "../store/erasure.ts";
import { partnerOf } from "./gate.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { UserPath } from "./userPaths.ts";

const Erased = t.Object(
  { user_id: t.String({ format: "uuid" }), deleted: t.Literal(true) },
  { title: "Erasure" },
);

/**
 * docs/api.md §16: the user and everything stored for them, in one transaction. A second erasure, like
 * every later call with the id, finds no user.
 */
export const erasureRoute = route({
  method: "DELETE",
  path: "/users/:user_id",
  policy: { auth: true, budget: "write" },
  schema: {
    params: UserPath,
    response: { 200: Erased },
    detail: {
      operationId: "eraseUser",
      description: "One transaction; every later call with this user_id is user_not_found (docs/api.md §16).",
      summary: "Erase the user and everything stored for them; the email and phone number become free",
      tags: ["users"],
    },
  },
  handle:
    ({ store }) =>
    async ({ request, params }): Promise<typeof Erased.static> => {
      const { partnerId } = partnerOf(request);
      if (!(await eraseUser(store, partnerId, params.user_id))) throw userNotFound();
      // The id as the user was created with it: PostgreSQL writes a UUID in lowercase.
      return { user_id: params.user_id.toLowerCase(), deleted: true };
    },
});
