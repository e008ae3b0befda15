import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Store } from "../store/db.ts";
import { historyPage } from "../store/history.ts";
import type { ResourceDeps } from "./app.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { errorResponses } from "./errors.ts";
import type { EventFactsCache } from "./eventFacts.ts";
import { EventBody, finishedJsonWithEvents } from "./eventMappers.ts";
import { decimalText, integerText } from "./formats.ts";
import { partnerOf } from "./gate.ts";
import { userNotFound } from "./requireUser.ts";
import { UserPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

const DEFAULT_LIMIT = 25;

/**
 * Query values are matched as text (see `integerText`): docs/api.md §7 wants anything but a plain 1..100
 * and `true`/`false` refused.
 */
const HistoryQuery = openObject({
  limit: t.Optional(integerText(1, 100, "Integer 1 to 100, default 25")),
  cursor: t.Optional(t.String({ description: "Opaque: the next_cursor of the previous page" })),
  include_media: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { default: "true" })),
  min_confidence: t.Optional(
    decimalText(0, 1, "Leave out events whose confidence is below this, 0 to 1, default 0 (docs/api.md §15)"),
  ),
});

const HistoryResponse = t.Object({
  events: t.Array(EventBody),
  next_cursor: t.Union([t.String(), t.Null()]),
  has_more: t.Boolean(),
  total: t.Union([Type.Integer(), t.Null()], {
    description: "Count of visible events at or above min_confidence; null after the first page",
  }),
});
type HistoryResponse = typeof HistoryResponse.static;

type HistoryRequest = {
  partnerId: string;
  /** Lowercase, as cursors are bound to it. */
  userId: string;
  limit: number;
  /** The raw cursor, when the partner sent a non-empty one. */
  cursor: string | null;
  includeMedia: boolean;
  /** min_confidence in hundredths; 0 leaves nothing out. */
  minConfidence: number;
};

type HistoryOutcome = {
  /** Each event of the page as JSON text (see `eventText`). */
  eventTexts: string[];
  nextCursor: string | null;
  total: number | null;
};

/**
 * One page of a user's attended events, newest first; `total` on the first page only. The cursor is
 * judged first (a query rule, docs/api.md §2 step 7), then the page statement looks the user up (step 8).
 */
export async function readHistory(
  { store, cursorSecret, eventFacts }: { store: Store; cursorSecret: string; eventFacts: EventFactsCache },
  request: HistoryRequest,
): Promise<HistoryOutcome> {
  const { partnerId, userId } = request;
  const after = request.cursor === null ? null : decodeCursor(cursorSecret, userId, request.cursor);
  const page = await historyPage(store, { partnerId, userId }, after, {
    limit: request.limit,
    includeMedia: request.includeMedia,
    minConfidence: request.minConfidence,
  });
  if (page === null) throw userNotFound();
  const nextCursor = page.next === null ? null : encodeCursor(cursorSecret, request.userId, page.next);
  const eventTexts = await eventFacts.eventTexts(store, page.catalogVersion, page.events);
  return { eventTexts, nextCursor, total: page.total };
}

/**
 * The least confidence in hundredths that is not below `share` (0 to 1): stored confidences are whole
 * hundredths, and `0.07 * 100` is 7.000000000000001, which must still let 7 through.
 */
export function hundredthsAtLeast(share: number): number {
  return Math.ceil(share * 100 - 1e-9);
}

/** The members after `events`, which `finishedJsonWithEvents` writes. */
function toHistoryMembers(outcome: HistoryOutcome): Omit<HistoryResponse, "events"> {
  return {
    next_cursor: outcome.nextCursor,
    has_more: outcome.nextCursor !== null,
    total: outcome.total,
  };
}

export function eventsResource(deps: ResourceDeps) {
  return new Elysia({ name: "events" }).get(
    "/users/:user_id/events",
    async ({ request, params, query }) => {
      const outcome = await readHistory(deps, {
        partnerId: partnerOf(request).partnerId,
        userId: params.user_id.toLowerCase(),
        limit: query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit),
        cursor: query.cursor === undefined || query.cursor === "" ? null : query.cursor,
        includeMedia: query.include_media !== "false",
        minConfidence:
          query.min_confidence === undefined ? 0 : hundredthsAtLeast(Number(query.min_confidence)),
      });
      return finishedJsonWithEvents({}, outcome.eventTexts, toHistoryMembers(outcome));
    },
    {
      params: UserPath,
      query: HistoryQuery,
      response: { 200: HistoryResponse, ...errorResponses(400, 401, 404, 405, 429, 500) },
      detail: { summary: "The user's attended events, newest first, paged by cursor", tags: ["events"] },
    },
  );
}
