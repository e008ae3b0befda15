import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { readHistory } from "../flows/history/readHistory.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { EventBody, finishedJsonWithEvents } from "./eventMappers.ts";
import { booleanText, decimalText, integerText } from "./formats.ts";
import { partnerOf } from "./gate.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { UserPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

/** What a history request without the parameter gets, declared here for the handler and the document alike. */
const DEFAULT_LIMIT = 25;
const DEFAULT_INCLUDE_MEDIA = true;
const DEFAULT_MIN_CONFIDENCE = 0;

/**
 * Query values are matched as text (see `integerText`): docs/api.md §7 wants anything but a plain 1..100
 * and `true`/`false` refused.
 */
const HistoryQuery = openObject({
  limit: t.Optional(integerText(1, 100, { default: DEFAULT_LIMIT, description: "Events per page" })),
  cursor: t.Optional(t.String({ description: "Opaque: the next_cursor of the previous page" })),
  include_media: t.Optional(
    booleanText({
      default: DEFAULT_INCLUDE_MEDIA,
      description: "false leaves each event's media out, for a lighter page",
    }),
  ),
  min_confidence: t.Optional(
    decimalText(0, 1, {
      default: DEFAULT_MIN_CONFIDENCE,
      description: "Leave out events whose confidence is below this (docs/api.md §15)",
    }),
  ),
});

const HistoryResponse = t.Object(
  {
    events: t.Array(EventBody),
    next_cursor: t.Union([t.String(), t.Null()]),
    has_more: t.Boolean(),
    total: t.Union([Type.Integer(), t.Null()], {
      description: "Count of visible events at or above min_confidence; null after the first page",
    }),
  },
  { title: "EventPage" },
);
type HistoryResponse = typeof HistoryResponse.static;

/**
 * The least confidence in hundredths that is not below `share` (0 to 1): stored confidences are whole
 * hundredths, and `0.07 * 100` is 7.000000000000001, which must still let 7 through.
 */
function hundredthsAtLeast(share: number): number {
  return Math.ceil(share * 100 - 1e-9);
}

/** The members after `events`, which `finishedJsonWithEvents` writes. */
function historyMembersOf(nextCursor: string | null, total: number | null): Omit<HistoryResponse, "events"> {
  return { next_cursor: nextCursor, has_more: nextCursor !== null, total };
}

/**
 * docs/architecture.md §4. The cursor is judged here, before the flow runs (a query rule, docs/api.md §2
 * step 7), and the flow's page statement looks the user up (step 8).
 */
export const historyRoute = route({
  method: "GET",
  path: "/users/:user_id/events",
  policy: { auth: true, budget: "read" },
  errors: ["invalid_cursor"],
  schema: {
    params: UserPath,
    query: HistoryQuery,
    response: { 200: HistoryResponse },
    detail: {
      operationId: "listEvents",
      description:
        "Page with has_more and next_cursor; cursors are opaque and expire after 24 hours (docs/api.md §7).",
      summary: "The user's attended events, newest first, paged by cursor",
      tags: ["events"],
    },
  },
  handle:
    ({ store, eventFacts, cursorSecret }) =>
    async ({ request, params, query }) => {
      // Lowercase, as cursors are bound to it.
      const userId = params.user_id.toLowerCase();
      const cursor = query.cursor === undefined || query.cursor === "" ? null : query.cursor;
      const page = await readHistory(
        { store, eventFacts },
        {
          partnerId: partnerOf(request).partnerId,
          userId,
          after: cursor === null ? null : decodeCursor(cursorSecret, userId, cursor),
          limit: query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit),
          includeMedia:
            query.include_media === undefined ? DEFAULT_INCLUDE_MEDIA : query.include_media === "true",
          minConfidence: hundredthsAtLeast(Number(query.min_confidence ?? DEFAULT_MIN_CONFIDENCE)),
        },
      );
      if (page === null) throw userNotFound();
      const nextCursor = page.next === null ? null : encodeCursor(cursorSecret, userId, page.next);
      return finishedJsonWithEvents({}, page.eventTexts, historyMembersOf(nextCursor, page.total));
    },
});
