import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { readStats, type UserStats } from "../flows/stats/readStats.ts";
import { finishedJson } from "./eventMappers.ts";
import { integerText } from "./formats.ts";
import { partnerOf } from "./gate.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { UserPath } from "./userPaths.ts";
import { openObject } from "./validation.ts";

const DEFAULT_TOP = 5;

/** `top` in plain decimal, 1 to 50 (see `integerText`). */
const StatsQuery = openObject({
  top: t.Optional(integerText(1, 50, { default: DEFAULT_TOP, description: "Length of each top list" })),
});

/** Plain TypeBox integers: elysia's `t.Integer` also accepts numeric strings and documents itself so. */
const Id = Type.Integer();
const Count = Type.Integer({ minimum: 0 });
const nullableText = t.Union([t.String(), t.Null()]);
const EventRef = t.Union([t.Object({ id: Id, name: t.String(), starts_at_local: t.String() }), t.Null()]);

const Stats = t.Object(
  {
    has_synced: t.Boolean(),
    last_sync_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    events_count: Count,
    media_count: Count,
    photo_count: Count,
    video_count: Count,
    venues_count: Count,
    cities_count: Count,
    countries_count: Count,
    performers_count: Count,
    first_event: EventRef,
    latest_event: EventRef,
    top_performers: t.Array(
      t.Object({
        id: Id,
        name: t.String(),
        category: nullableText,
        image_url: nullableText,
        events_count: Count,
      }),
    ),
    top_venues: t.Array(
      t.Object({
        id: Id,
        name: t.String(),
        city: nullableText,
        region: nullableText,
        country: nullableText,
        events_count: Count,
      }),
    ),
    top_cities: t.Array(
      t.Object({ city: t.String(), region: nullableText, country: nullableText, events_count: Count }),
    ),
    events_by_year: t.Array(t.Object({ year: Id, events_count: Count })),
    categories: t.Array(t.Object({ category: t.String(), events_count: Count })),
  },
  { title: "Stats" },
);
type Stats = typeof Stats.static;

const eventRefOf = (event: UserStats["firstEvent"]): Stats["first_event"] =>
  event === null ? null : { id: event.id, name: event.name, starts_at_local: event.startsAtLocal };

function statsOf(stats: UserStats): Stats {
  return {
    has_synced: stats.hasSynced,
    last_sync_at: stats.lastSyncAt === null ? null : stats.lastSyncAt.toISOString(),
    events_count: stats.eventsCount,
    media_count: stats.mediaCount,
    photo_count: stats.photoCount,
    video_count: stats.videoCount,
    venues_count: stats.venuesCount,
    cities_count: stats.citiesCount,
    countries_count: stats.countriesCount,
    performers_count: stats.performersCount,
    first_event: eventRefOf(stats.firstEvent),
    latest_event: eventRefOf(stats.latestEvent),
    top_performers: stats.topPerformers.map((p) => ({
      id: p.id,
      name: p.name,
      category: p.category,
      image_url: p.imageUrl,
      events_count: p.eventsCount,
    })),
    top_venues: stats.topVenues.map((v) => ({
      id: v.id,
      name: v.name,
      city: v.city,
      region: v.region,
      country: v.country,
      events_count: v.eventsCount,
    })),
    top_cities: stats.topCities.map((c) => ({
      city: c.city,
      region: c.region,
      country: c.country,
      events_count: c.eventsCount,
    })),
    events_by_year: stats.eventsByYear.map((y) => ({ year: y.year, events_count: y.eventsCount })),
    categories: stats.categories.map((c) => ({ category: c.category, events_count: c.eventsCount })),
  };
}

export const statsRoute = route({
  method: "GET",
  path: "/users/:user_id/stats",
  policy: { auth: true, budget: "read" },
  schema: {
    params: UserPath,
    query: StatsQuery,
    response: { 200: Stats },
    detail: {
      operationId: "getStats",
      description:
        "has_synced and last_sync_at say which scan to run next; the counts and top lists cover visible events only (docs/api.md §9).",
      summary: "Statistics over the user's visible events, with the sync state that picks the next scan",
      tags: ["stats"],
    },
  },
  handle:
    (deps) =>
    async ({ request, params, query }) => {
      const { partnerId } = partnerOf(request);
      const top = query.top === undefined ? DEFAULT_TOP : Number(query.top);
      const stats = await readStats(deps, { partnerId, userId: params.user_id }, top);
      // The statement is the user lookup too (docs/api.md §2 step 8 still comes after the query passed).
      if (stats === null) throw userNotFound();
      return finishedJson(statsOf(stats));
    },
});
