import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { type BatchOutcome, ingestMediaBatch, type Match } from "../flows/ingest/ingestBatch.ts";
import { REJECTION_DETAILS } from "../flows/ingest/mediaItems.ts";
import { EventBody, finishedJsonWithEvents } from "./eventMappers.ts";
import { contextOf, partnerOf } from "./gate.ts";
import { checkMediaBatch, MediaBatchBody, translateMediaIssues } from "./mediaSchema.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { JSON_BODY, UserPath } from "./userPaths.ts";

const MatchBody = t.Object(
  {
    media_id: t.String(),
    matched: t.Boolean(),
    event_id: t.Union([Type.Integer(), t.Null()]),
    venue_id: t.Union([Type.Integer(), t.Null()]),
    confidence: t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()], {
      description:
        "This item's match on its own, 0 to 1 with two decimals (docs/api.md §15); null when not matched",
    }),
  },
  {
    title: "Match",
    examples: [{ media_id: "IMG_0001", matched: true, event_id: 2180, venue_id: 47, confidence: 0.83 }],
  },
);

const Rejection = t.Object(
  {
    id: t.String(),
    reason: t.Union([t.Literal("missing_coordinates"), t.Literal("missing_taken_at"), t.Literal("invalid")]),
    detail: t.Union(
      REJECTION_DETAILS.map((detail) => t.Literal(detail)),
      {
        description:
          "Which rule the item broke (docs/api.md §4); additive to reason, which stays as specified",
      },
    ),
  },
  {
    title: "Rejection",
    examples: [{ id: "IMG_0002", reason: "invalid", detail: "taken_at_without_offset" }],
  },
);
type MatchBody = typeof MatchBody.static;

const MediaBatchResponse = t.Object(
  {
    accepted: Type.Integer(),
    matched: Type.Integer(),
    rejected: t.Array(Rejection),
    matches: t.Array(MatchBody),
    events: t.Array(EventBody),
    last_sync_at: t.String({ format: "date-time" }),
  },
  { title: "MediaBatchResult" },
);
type MediaBatchResponse = typeof MediaBatchResponse.static;

/** The members before `events`, which `finishedJsonWithEvents` writes; `last_sync_at` follows it. */
function batchMembersOf(outcome: BatchOutcome): Omit<MediaBatchResponse, "events" | "last_sync_at"> {
  return {
    accepted: outcome.accepted,
    matched: outcome.matched,
    rejected: outcome.rejected.map((r) => ({ id: r.id, reason: r.reason, detail: r.detail })),
    matches: outcome.matches.map(matchBodyOf),
  };
}

function matchBodyOf(match: Match): MatchBody {
  return {
    media_id: match.mediaId,
    matched: match.matched,
    event_id: match.eventId,
    venue_id: match.venueId,
    confidence: match.confidence,
  };
}

/** docs/architecture.md §3: the route of a media batch; the flow does the rest. */
export const mediaBatchRoute = route({
  method: "POST",
  path: "/users/:user_id/media",
  policy: { auth: true, budget: "ingest", itemsChecked: "media" },
  translate: translateMediaIssues,
  errors: ["empty_batch", "invalid_batch_size", "invalid_media_item"],
  schema: {
    params: UserPath,
    parse: JSON_BODY,
    transform: ({ body, request }) => checkMediaBatch(body, contextOf(request)?.mayHoldMalformed ?? false),
    body: MediaBatchBody,
    response: { 200: MediaBatchResponse },
    detail: {
      operationId: "sendMediaBatch",
      description:
        "Matching is synchronous: the answer is the result for this batch. Per-item rejections keep the status 200; re-sending is safe (docs/api.md §4).",
      summary: "Send a batch of 1 to 200 media items; matched events come back synchronously",
      tags: ["media"],
    },
  },
  handle:
    (deps) =>
    async ({ request, params, body }) => {
      const user = { partnerId: partnerOf(request).partnerId, userId: params.user_id };
      const outcome = await ingestMediaBatch(deps, user, body.media);
      // The write is the user lookup too (docs/api.md §2 step 8 still comes after the body passed).
      if (outcome === null) throw userNotFound();
      deps.metrics?.batch({
        accepted: outcome.accepted,
        matched: outcome.matched,
        rejected: outcome.rejected,
      });
      return finishedJsonWithEvents(batchMembersOf(outcome), outcome.eventTexts, {
        last_sync_at: outcome.lastSyncAt.toISOString(),
      });
    },
});
