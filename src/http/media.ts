import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { itemConfidence, itemWeight, spotCell } from "../confidence/confidence.ts";
import type { Matcher, MatchSettings, PlacedCandidate } from "../shards/matcher.ts";
import type { Store } from "../store/db.ts";
import { attendedOf } from "../store/eventDetails.ts";
import { type KeptMedia, writeBatch } from "../store/ingest.ts";
import type { ResourceDeps } from "./app.ts";
import { errorResponses } from "./errors.ts";
import type { EventFactsCache } from "./eventFacts.ts";
import { EventBody, finishedJsonWithEvents } from "./eventMappers.ts";
import { contextOf, partnerOf } from "./gate.ts";
import { type AcceptedItem, classifyItems, matchInstantMs, type Rejection, utcText } from "./mediaItems.ts";
import { checkMediaBatch, MediaBatchBody, type MediaItem } from "./mediaSchema.ts";
import { userNotFound } from "./requireUser.ts";
import { JSON_BODY, UserPath } from "./userPaths.ts";

const MatchBody = t.Object({
  media_id: t.String(),
  matched: t.Boolean(),
  event_id: t.Union([Type.Integer(), t.Null()]),
  venue_id: t.Union([Type.Integer(), t.Null()]),
  confidence: t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()], {
    description:
      "This item's match on its own, 0 to 1 with two decimals (docs/api.md §15); null when not matched",
  }),
});
type MatchBody = typeof MatchBody.static;

const MediaBatchResponse = t.Object({
  accepted: Type.Integer(),
  matched: Type.Integer(),
  rejected: t.Array(
    t.Object({
      id: t.String(),
      reason: t.Union([
        t.Literal("missing_coordinates"),
        t.Literal("missing_taken_at"),
        t.Literal("invalid"),
      ]),
    }),
  ),
  matches: t.Array(MatchBody),
  events: t.Array(EventBody),
  last_sync_at: t.String({ format: "date-time" }),
});
type MediaBatchResponse = typeof MediaBatchResponse.static;

type BatchOutcome = {
  accepted: number;
  rejected: Rejection[];
  matches: MatchBody[];
  kept: KeptMedia[];
  /** Each matched event as JSON text (see `eventText`). */
  eventTexts: string[];
  lastSyncAt: Date;
};

/** docs/api.md §4: only a licensed best candidate is a match; an unlicensed one still names its venue. */
function matchOf(item: AcceptedItem, candidate: PlacedCandidate | null): MatchBody {
  const matched = candidate?.licensed === true;
  return {
    media_id: item.id,
    matched,
    event_id: matched ? candidate.eventId : null,
    venue_id: candidate?.venueId ?? null,
    confidence: matched ? itemConfidence(candidate.place) : null,
  };
}

/** A kept item with what its event's confidence needs from it: its weight and its routine spot cell. */
function keptOf(item: AcceptedItem, candidate: PlacedCandidate): KeptMedia {
  const { id, takenAt, ...stored } = item;
  return {
    ...stored,
    mediaId: id,
    takenAt: utcText(takenAt),
    eventId: candidate.eventId,
    venueId: candidate.venueId,
    spot: spotCell(item, candidate.venue),
    weight: itemWeight(candidate.place),
  };
}

/**
 * A validated batch from classification to response data: per-item rules, matching outside any
 * transaction, one atomic write, and the matched events expanded with everything the user keeps there,
 * read inside it; their catalog facts come from the cache.
 * Events come in the order of their first match in the batch.
 */
export async function ingestMediaBatch(
  {
    store,
    matcher,
    eventFacts,
    config,
  }: { store: Store; matcher: Matcher; eventFacts: EventFactsCache; config: { match: MatchSettings } },
  user: { partnerId: string; userId: string },
  items: readonly MediaItem[],
): Promise<BatchOutcome> {
  const { accepted, rejected } = classifyItems(items);
  const candidates =
    accepted.length === 0
      ? []
      : await matcher.match(
          accepted.map((item) => ({
            latitude: item.latitude,
            longitude: item.longitude,
            takenAtMs: matchInstantMs(item.takenAt),
          })),
        );
  if (candidates.length !== accepted.length) {
    throw new Error(`matcher answered ${candidates.length} of ${accepted.length} queries`);
  }
  const matches: MatchBody[] = [];
  const kept: KeptMedia[] = [];
  accepted.forEach((item, i) => {
    const candidate = candidates[i] ?? null;
    matches.push(matchOf(item, candidate));
    if (candidate?.licensed) kept.push(keptOf(item, candidate));
  });
  const eventIds = [...new Set(kept.map((m) => m.eventId))];
  // The facts the cache lacks are read before anything is written (see `readUncached`).
  const prefetched = await eventFacts.readUncached(store, eventIds);
  const written = await writeBatch(
    store,
    {
      ...user,
      acceptedIds: accepted.map((a) => a.id),
      kept,
      defaultDurationMinutes: config.match.defaultDurationMinutes,
    },
    eventIds,
  );
  // The write is the user lookup too (docs/api.md §2 step 8 still comes after the body passed).
  if (written === null) throw userNotFound();
  const { lastSyncAt, events } = written;
  const version = events[0]?.catalog_version;
  // An import that committed between the read and the write makes the facts read out of date: they are
  // read again after the commit, the one case where a committed batch can still fail (a 500, safe to
  // re-send).
  const readAlong =
    prefetched !== null && prefetched.catalogVersion === version ? prefetched.facts : undefined;
  const eventTexts =
    version === undefined
      ? []
      : await eventFacts.eventTexts(store, version, attendedOf(events, true), readAlong);
  return { accepted: accepted.length, rejected, matches, kept, eventTexts, lastSyncAt };
}

/** The members before `events`, which `finishedJsonWithEvents` writes; `last_sync_at` follows it. */
function toBatchMembers(outcome: BatchOutcome): Omit<MediaBatchResponse, "events" | "last_sync_at"> {
  return {
    accepted: outcome.accepted,
    matched: outcome.kept.length,
    rejected: outcome.rejected.map((r) => ({ id: r.id, reason: r.reason })),
    matches: outcome.matches,
  };
}

export function mediaResource(deps: ResourceDeps) {
  return new Elysia({ name: "media" }).post(
    "/users/:user_id/media",
    async ({ request, params, body }) => {
      const user = { partnerId: partnerOf(request).partnerId, userId: params.user_id };
      const outcome = await ingestMediaBatch(deps, user, body.media);
      deps.metrics?.batch({
        accepted: outcome.accepted,
        matched: outcome.kept.length,
        rejected: outcome.rejected,
      });
      return finishedJsonWithEvents(toBatchMembers(outcome), outcome.eventTexts, {
        last_sync_at: outcome.lastSyncAt.toISOString(),
      });
    },
    {
      params: UserPath,
      parse: JSON_BODY,
      transform: ({ body, request }) => checkMediaBatch(body, contextOf(request)?.mayHoldMalformed ?? false),
      body: MediaBatchBody,
      response: { 200: MediaBatchResponse, ...errorResponses(400, 401, 404, 405, 408, 413, 415, 429, 500) },
      detail: {
        summary: "Send a batch of 1 to 200 media items; matched events come back synchronously",
        tags: ["media"],
      },
    },
  );
}
