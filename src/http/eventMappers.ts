import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { jsonResponse } from "./jsonResponse.ts";

/** What the document shows as an example of each (the OpenAPI document's `examples`). */
const EXAMPLE_VENUE = {
  id: 47,
  name: "Olympic Stadium",
  city: "Seoul",
  region: null,
  country: "KR",
  latitude: 37.515,
  longitude: 127.073,
};
const EXAMPLE_PERFORMER = {
  id: 9,
  name: "The Example Band",
  category: "pop",
  image_url: null,
  is_headliner: true,
};
const EXAMPLE_EVENT_MEDIA = {
  media_id: "IMG_0001",
  taken_at: "2025-07-16T12:15:00.000Z",
  media_type: "photo",
};

/**
 * The venue of docs/api.md §4, always with every member (the batch response too). Integers are
 * plain TypeBox integers: the framework's `t.Integer` also takes numeric strings and documents itself
 * as a string-or-integer union, which is not what these responses hold.
 */
export const VenueBody = t.Object(
  {
    id: Type.Integer(),
    name: t.String(),
    city: t.Union([t.String(), t.Null()]),
    region: t.Union([t.String(), t.Null()]),
    country: t.Union([t.String(), t.Null()]),
    latitude: t.Union([t.Number(), t.Null()]),
    longitude: t.Union([t.Number(), t.Null()]),
  },
  { title: "Venue", examples: [EXAMPLE_VENUE] },
);

/** A performer (docs/api.md §4). */
export const PerformerBody = t.Object(
  {
    id: Type.Integer(),
    name: t.String(),
    category: t.Union([t.String(), t.Null()]),
    image_url: t.Union([t.String(), t.Null()]),
    is_headliner: t.Union([t.Boolean(), t.Null()]),
  },
  { title: "Performer", examples: [EXAMPLE_PERFORMER] },
);

/** A kept item (docs/api.md §4): `thumbnail_url` is absent when none was submitted, never generated. */
export const EventMediaBody = t.Object(
  {
    media_id: t.String(),
    taken_at: t.String({ format: "date-time" }),
    media_type: t.Union([t.Literal("photo"), t.Literal("video")]),
    thumbnail_url: t.Optional(t.String()),
  },
  { title: "EventMedia", examples: [EXAMPLE_EVENT_MEDIA] },
);

/**
 * An event (docs/api.md §4), as `eventText` (src/flows/catalogFacts/eventText.ts) writes it: the cached
 * facts are kept as rendered text, so only this schema, which the OpenAPI document shows, lives here.
 * `media` is absent when the history was asked for with include_media=false.
 */
export const EventBody = t.Object(
  {
    id: Type.Integer(),
    name: t.String(),
    starts_at_local: t.String({
      description: "Local time at the venue, YYYY-MM-DDTHH:MM:SS, never converted",
    }),
    time_unknown: t.Optional(
      t.Literal(true, {
        description:
          "Present only when the catalog knows the date and not the time: starts_at_local is the date at 00:00:00 (docs/api.md §4)",
      }),
    ),
    venue: VenueBody,
    performers: t.Array(PerformerBody),
    media_count: Type.Integer(),
    confidence: t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()], {
      description:
        "How sure the service is that the user attended, from all the user's kept items there, 0 to 1 with two decimals (docs/api.md §15); null until computed",
    }),
    media: t.Optional(t.Array(EventMediaBody)),
  },
  {
    title: "Event",
    examples: [
      {
        id: 2180,
        name: "Summer Stadium Tour",
        starts_at_local: "2025-07-16T19:30:00",
        venue: EXAMPLE_VENUE,
        performers: [EXAMPLE_PERFORMER],
        media_count: 1,
        confidence: 0.86,
        media: [EXAMPLE_EVENT_MEDIA],
      },
    ],
  },
);

/**
 * A 200 body the mappers built field by field from typed rows, handed to the framework as a finished
 * JSON Response (what it would build itself). A plain object would first be checked, cleaned and encoded
 * against the route's response schema member by member, a large share of the server's CPU on a history
 * page or a batch response (docs/performance.md §7). The schema stays on the route for the OpenAPI
 * document.
 */
export function finishedJson<T extends object>(body: T): Response {
  return jsonResponse(JSON.stringify(body));
}

/**
 * A 200 body with an `events` member of expanded events (docs/api.md §4) between the members `before` and
 * `after`, in the order the route's schema lists them: those encoded as `finishedJson` would, the
 * events as `eventText` wrote them.
 */
export function finishedJsonWithEvents<Before extends object, After extends object>(
  before: Before,
  eventTexts: readonly string[],
  after: After,
): Response {
  const members = [
    JSON.stringify(before).slice(1, -1),
    `"events":[${eventTexts.join(",")}]`,
    JSON.stringify(after).slice(1, -1),
  ].filter((text) => text !== "");
  return jsonResponse(`{${members.join(",")}}`);
}
