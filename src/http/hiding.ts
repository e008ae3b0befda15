import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { setEventHidden } from "../store/hiding.ts";
import type { AppDeps } from "./app.ts";
import { ApiError, errorResponses } from "./errors.ts";
import { partnerOf } from "./gate.ts";
import { requireUser } from "./requireUser.ts";
import { catalogEventId, JSON_BODY, UserEventPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

/** Neither operation takes input; a body, when sent, must still be a JSON object (unknown fields ignored). */
const NoInput = openObject({});

const HiddenState = t.Object({ event_id: Type.Integer(), hidden: t.Boolean() });

const options = (summary: string) => ({
  params: UserEventPath,
  parse: JSON_BODY,
  body: NoInput,
  response: { 200: HiddenState, ...errorResponses(400, 401, 404, 405, 408, 413, 415, 429, 500) },
  detail: { summary, tags: ["events"] },
});

/** docs/api.md §8: hide or unhide one event of a user's history; idempotent. */
export function hidingResource({ store }: AppDeps) {
  async function setHidden(request: Request, userId: string, eventIdParam: string, hidden: boolean) {
    const { partnerId } = partnerOf(request);
    await requireUser(store, partnerId, userId);
    const eventId = catalogEventId(eventIdParam);
    if (eventId === null || !(await setEventHidden(store, userId, eventId, hidden))) {
      throw new ApiError("event_not_found", "This user has no kept media at this event.");
    }
    return { event_id: eventId, hidden };
  }
  return new Elysia({ name: "hiding" })
    .post(
      "/users/:user_id/events/:event_id/hide",
      ({ request, params }) => setHidden(request, params.user_id, params.event_id, true),
      options("Hide an event from the user's history and stats"),
    )
    .post(
      "/users/:user_id/events/:event_id/unhide",
      ({ request, params }) => setHidden(request, params.user_id, params.event_id, false),
      options("Show a hidden event again"),
    );
}
