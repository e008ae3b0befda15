import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { completeSync, type SyncState } from "../store/syncState.ts";
import { partnerOf } from "./gate.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { JSON_BODY, UserPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

/**
 * docs/api.md §6: `photos_processed`, when sent, must be an integer >= 0. Null is not an integer, so it is
 * refused like any other wrong type rather than read as "omitted".
 */
const SyncCompleteBody = openObject(
  {
    photos_processed: t.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Assets the scan examined; 0 = the scan did not complete; omitted = inferred from what was sent",
      }),
    ),
  },
  { title: "SyncCompletion" },
);

const SyncStateResponse = t.Object(
  {
    has_synced: t.Boolean(),
    last_sync_at: t.String({ format: "date-time" }),
  },
  { title: "SyncState" },
);

function syncStateOf(state: SyncState): typeof SyncStateResponse.static {
  return { has_synced: state.hasSynced, last_sync_at: state.lastSyncAt.toISOString() };
}

export const syncCompleteRoute = route({
  method: "POST",
  path: "/users/:user_id/sync-complete",
  policy: { auth: true, budget: "write" },
  schema: {
    params: UserPath,
    parse: JSON_BODY,
    body: SyncCompleteBody,
    response: { 200: SyncStateResponse },
    detail: {
      operationId: "completeSync",
      description:
        "Called once at the end of a completed library scan, with an honest photos_processed; has_synced then picks the next scan, full or incremental (docs/api.md §6).",
      summary: "Mark the end of a completed library scan",
      tags: ["sync"],
    },
  },
  handle:
    ({ store }) =>
    async ({ request, params, body }) => {
      const { partnerId } = partnerOf(request);
      const state = await completeSync(store, partnerId, params.user_id, body.photos_processed ?? null);
      // The update is the user lookup too (docs/api.md §2 step 8 still comes after the body passed).
      if (state === null) throw userNotFound();
      return syncStateOf(state);
    },
});
