import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import type { Store } from "../store/db.ts";
import { setEventHidden } from "../store/hiding.ts";
import { ApiError } from "./errors.ts";
import { partnerOf } from "./gate.ts";
import { requireUser } from "./requireUser.ts";
import { route } from "./route.ts";
import { catalogEventId, JSON_BODY, UserEventPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

/** Neither operation takes input; a body, when sent, must still be a JSON object (unknown fields ignored). */
const NoInput = openObject({});

const HiddenState = t.Object({ event_id: Type.Integer(), hidden: t.Boolean() }, { title: "HiddenState" });

const schema = (operationId: string, summary: string, description: string) => ({
  params: UserEventPath,
  parse: JSON_BODY,
  body: NoInput,
  response: { 200: HiddenState },
  detail: { operationId, summary, description, tags: ["events"] },
});

/** docs/api.md §8: hide or unhide one event of a user's history; idempotent. */
async function setHidden(
  store: Store,
  request: Request,
  userId: string,
  eventIdParam: string,
  hidden: boolean,
): Promise<typeof HiddenState.static> {
  const { partnerId } = partnerOf(request);
  await requireUser(store, partnerId, userId);
  const eventId = catalogEventId(eventIdParam);
  if (eventId === null || !(await setEventHidden(store, userId, eventId, hidden))) {
    throw new ApiError("event_not_found", "This user has no kept media at this event.");
  }
  return { event_id: eventId, hidden };
}

export const hideRoute = route({
  method: "POST",
  path: "/users/:user_id/events/:event_id/hide",
  policy: { auth: true, budget: "write" },
  errors: ["event_not_found"],
  schema: schema(
    "hideEvent",
    "Hide an event from the user's history and stats",
    "Idempotent; the event leaves the history and stats whatever is sent later (docs/api.md §8).",
  ),
  handle:
    ({ store }) =>
    ({ request, params }) =>
      setHidden(store, request, params.user_id, params.event_id, true),
});

export const unhideRoute = route({
  method: "POST",
  path: "/users/:user_id/events/:event_id/unhide",
  policy: { auth: true, budget: "write" },
  errors: ["event_not_found"],
  schema: schema(
    "unhideEvent",
    "Show a hidden event again",
    "Idempotent; the event comes back to the history and stats (docs/api.md §8).",
  ),
  handle:
    ({ store }) =>
    ({ request, params }) =>
      setHidden(store, request, params.user_id, params.event_id, false),
});
