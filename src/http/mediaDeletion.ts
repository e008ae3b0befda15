import { t } from "elysia";
import { deleteMedia, type MediaDeletion } from "../store/mediaDeletion.ts";
import { fitsCharacters, isUnstorableString } from "../store/text.ts";
import { ApiError } from "./errors.ts";
import { limitedString } from "./formats.ts";
import { contextOf, partnerOf } from "./gate.ts";
import { MAX_BATCH_ITEMS } from "./mediaSchema.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { JSON_BODY, UserPath } from "./userPaths.ts";
import { type Issue, type IssueReason, invalidRequest, openObject } from "./validation.ts";

const MAX_ID_CHARACTERS = 255;

const MediaDeletionBody = openObject(
  {
    ids: t.Array(
      limitedString(MAX_ID_CHARACTERS, {
        minLength: 1,
        description: "A media id as sent in a batch: 1 to 255 characters (Unicode code points)",
      }),
      { minItems: 1, maxItems: MAX_BATCH_ITEMS },
    ),
  },
  { title: "MediaDeletion" },
);

const MediaDeletionResponse = t.Object(
  {
    deleted: t.Array(t.String(), { description: "Ids the user kept, now deleted, in the order first sent" }),
    not_found: t.Array(t.String(), {
      description: "Ids the user kept nothing under, in the order first sent",
    }),
  },
  { title: "MediaDeletionResult" },
);

/** What is wrong with one element of `ids`, or null; a malformed string is looked for only when one may be. */
function idIssue(id: unknown, mayHoldMalformed: boolean): IssueReason | null {
  if (typeof id !== "string") return "type";
  if (id.length === 0) return "required";
  if (!fitsCharacters(id, MAX_ID_CHARACTERS)) return "max_length";
  return mayHoldMalformed && isUnstorableString(id) ? "type" : null;
}

/**
 * The checks of docs/api.md §16 in the order of a media batch's (§4): the count first, so 201 ids are
 * 413 whatever they hold, then every element, each offending one named (`ids.3`) however many there
 * are. Malformed strings in `ids` are left here by the gate (`RoutePolicy.itemsChecked`) for that
 * order. A body whose `ids` is not an array is left to the schema (400 invalid_request).
 */
export function checkDeletionBatch(body: unknown, mayHoldMalformed: boolean): void {
  const ids = body !== null && typeof body === "object" ? (body as { ids?: unknown }).ids : undefined;
  if (!Array.isArray(ids)) return;
  if (ids.length === 0) throw new ApiError("empty_batch", "The ids array is empty; send 1 to 200 ids.");
  if (ids.length > MAX_BATCH_ITEMS) {
    throw new ApiError(
      "invalid_batch_size",
      `A deletion holds at most ${MAX_BATCH_ITEMS} ids; split it and resend.`,
      { received: ids.length },
    );
  }
  const issues: Issue[] = ids.flatMap((id, index) => {
    const reason = idIssue(id, mayHoldMalformed);
    return reason === null ? [] : [{ path: ["ids", index], reason }];
  });
  if (issues.length > 0) throw invalidRequest(issues, "body");
}

function deletionOf(outcome: MediaDeletion): typeof MediaDeletionResponse.static {
  return { deleted: outcome.deleted, not_found: outcome.notFound };
}

/** docs/api.md §16: deletes kept items by id, atomically, with everything derived from them. */
export const mediaDeletionRoute = route({
  method: "POST",
  path: "/users/:user_id/media/delete",
  policy: { auth: true, budget: "ingest", itemsChecked: "ids" },
  errors: ["empty_batch", "invalid_batch_size"],
  schema: {
    params: UserPath,
    parse: JSON_BODY,
    transform: ({ body, request }) => checkDeletionBatch(body, contextOf(request)?.mayHoldMalformed ?? false),
    body: MediaDeletionBody,
    response: { 200: MediaDeletionResponse },
    detail: {
      operationId: "deleteMedia",
      description:
        "Atomic; history, media counts and stats follow at once. An id sent again later is matched like any new item (docs/api.md §16).",
      summary: "Delete 1 to 200 kept media items by id, with everything derived from them",
      tags: ["media"],
    },
  },
  handle:
    ({ store, config }) =>
    async ({ request, params, body }) => {
      const { partnerId } = partnerOf(request);
      // The events left behind get their confidence again, with the settings the batches use.
      const scope = {
        userId: params.user_id,
        partnerId,
        defaultDurationMinutes: config.match.defaultDurationMinutes,
      };
      const outcome = await deleteMedia(store, scope, body.ids);
      // The deletion is the user lookup too (docs/api.md §2 step 8 still comes after the body passed).
      if (outcome === null) throw userNotFound();
      return deletionOf(outcome);
    },
});
