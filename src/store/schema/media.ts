import { sql } from "drizzle-orm";
import {
  boolean,
  doublePrecision,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { events } from "./catalog.ts";
import { users } from "./users.ts";

/** Media items that matched an event. Items that match nothing are never stored (docs/api.md §4). */
export const media = pgTable(
  "media",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** The partner's asset id, opaque, at most 255 characters: the deduplication key within the user. */
    mediaId: text("media_id").notNull(),
    eventId: integer("event_id")
      .notNull()
      .references(() => events.id),
    venueId: integer("venue_id").notNull(),
    takenAt: timestamp("taken_at", { withTimezone: true, mode: "date" }).notNull(),
    latitude: doublePrecision("latitude").notNull(),
    longitude: doublePrecision("longitude").notNull(),
    mediaType: text("media_type", { enum: ["photo", "video"] }).notNull(),
    filename: text("filename"),
    durationSeconds: doublePrecision("duration_seconds"),
    thumbnailUrl: text("thumbnail_url"),
    deviceMake: text("device_make"),
    deviceModel: text("device_model"),
    deviceLensModel: text("device_lens_model"),
    /**
     * The item's spot cell against its venue (`spotCell` in src/confidence): what `user_venue_spots`
     * counts. Null for an item kept before confidence existed, and for one kept in the venue's core before
     * in-core items had cells.
     */
    spotRow: smallint("spot_row"),
    spotCol: smallint("spot_col"),
    /**
     * Whether the item lies in the venue's core. Null for an item kept before it was stored, when only an
     * item in the core had no spot: the store reads null as `spot_row is null` (`inCore` in
     * src/store/confidenceSql.ts), so those rows count as they did until `bun run cli confidence backfill
     * --all` places them again.
     */
    inCore: boolean("in_core"),
    /**
     * The item's confidence weight against the event it matched (`itemWeight`), fixed at match time as
     * the match itself is (docs/api.md §5). Double precision so the sums the store makes round to the
     * same two decimals as the test model; null for an item kept before confidence existed.
     */
    weight: doublePrecision("weight"),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  // The second index serves the history: a user's media at an event, oldest first, the id breaking ties.
  // It leads with the user, so a page's lookups of one user's events land in one narrow stretch of the
  // index instead of one leaf page per event scattered over the whole table (at scale, an index many
  // times the size of shared buffers; docs/performance.md §7). It ends with the media id so that it is
  // always larger than the primary key: for a user the statistics do not list (every user created since
  // the last ANALYZE) the planner expects about one row in either index, and then takes the smaller one
  // for a batch's probe by (user, media id); the probe must stay on the primary key, or each id of a
  // batch reads all of the user's media (test/store-plans.test.ts reads both plans).
  (t) => [
    primaryKey({ columns: [t.userId, t.mediaId] }),
    index("media_user_event_time_idx").on(t.userId, t.eventId, t.takenAt, t.mediaId),
  ],
);

/**
 * One row per (user, event) the user has kept media at: the attended-event history. Maintained in the
 * same transaction as `media` so history pages and stats read a small per-user set instead of
 * aggregating every kept item. `mediaCount` drops to 0 rather than deleting the row, so a hidden flag
 * survives its media being re-evaluated away and back.
 *
 * The row carries copies of the event facts that decide visibility, order and the stats' tallies (start,
 * local start, venue, licence), written by the batch and moved by any import that changes them
 * (`refreshAttendedCopies`). Reading them from `events` instead cost a key lookup per event into a table
 * of millions of rows that does not stay in shared buffers, a large share of a stats request
 * (docs/performance.md §7).
 */
export const userEvents = pgTable(
  "user_events",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    eventId: integer("event_id")
      .notNull()
      .references(() => events.id),
    /** Copy of the event's start instant: the history's sort key, so a page is one index range scan. */
    startsAt: timestamp("starts_at", { withTimezone: true, mode: "date" }).notNull(),
    /** Copy of the event's local start text: the stats' years and first and latest events. */
    startsAtLocal: text("starts_at_local").notNull(),
    /** Copy of the event's venue: the stats' venue and city tallies. */
    venueId: integer("venue_id").notNull(),
    /** Copy of the event's licence: only licensed events are visible (docs/api.md §7). */
    licensed: boolean("licensed").notNull(),
    mediaCount: integer("media_count").notNull().default(0),
    photoCount: integer("photo_count").notNull().default(0),
    videoCount: integer("video_count").notNull().default(0),
    hidden: boolean("hidden").notNull().default(false),
    /**
     * The user's attendance confidence in hundredths (docs/api.md §15), from every kept item there;
     * null for a row no batch has touched since confidence existed, until `cli confidence backfill`.
     */
    confidence: smallint("confidence"),
    firstMatchedAt: timestamp("first_matched_at", { withTimezone: true, mode: "date" })
      .notNull()
      .defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.eventId] }),
    index("user_events_history_idx")
      .on(t.userId, t.startsAt.desc(), t.eventId.desc())
      .where(sql`${t.mediaCount} > 0 and not ${t.hidden} and ${t.licensed}`),
  ],
);

/**
 * The media list of each history row, kept rendered in the wire format of docs/api.md §4 (a JSON array,
 * oldest capture first), so a history page or a batch response copies one text per event instead of
 * building an object for each of its items: building them was much of a page's database time and most of
 * the server's (docs/performance.md §7). The batch that changes a user's media at an event renders that
 * event's list again in the same statement (src/store/ingest.ts), so the list always agrees with `media`
 * and with the row's `media_count`. A separate table, not a column of `user_events`: the stats read
 * every history row of a user and would otherwise carry the lists along. A list goes with its history
 * row.
 */
export const userEventMedia = pgTable(
  "user_event_media",
  {
    userId: uuid("user_id").notNull(),
    eventId: integer("event_id").notNull(),
    mediaJson: text("media_json").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.eventId] }),
    foreignKey({
      name: "user_event_media_history_row_fk",
      columns: [t.userId, t.eventId],
      foreignColumns: [userEvents.userId, userEvents.eventId],
    }).onDelete("cascade"),
  ],
);

/**
 * Which events a user's kept items at a venue fall on, per spot cell (`spotCell`): one row per (cell,
 * event) with the number of items there and how many of them lie in the venue's core, kept by the batch
 * statement. Finding a routine spot (docs/api.md §15) reads a venue's rows with one range lookup instead
 * of every kept item. A row whose count falls to zero stays until `bun run cli confidence backfill`
 * rebuilds the user's rows: lookups skip it.
 */
export const userVenueSpots = pgTable(
  "user_venue_spots",
  {
    userId: uuid("user_id").notNull(),
    venueId: integer("venue_id").notNull(),
    spotRow: smallint("spot_row").notNull(),
    spotCol: smallint("spot_col").notNull(),
    eventId: integer("event_id").notNull(),
    items: integer("items").notNull(),
    /** Of `items`, those in the venue's core. Rows from before in-core items had cells hold none. */
    coreItems: integer("core_items").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.venueId, t.spotRow, t.spotCol, t.eventId] })],
);
