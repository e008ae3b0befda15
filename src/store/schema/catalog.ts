import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";

export const venues = pgTable("venues", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  city: text("city"),
  region: text("region"),
  country: text("country"),
  latitude: doublePrecision("latitude").notNull(),
  longitude: doublePrecision("longitude").notNull(),
  /** IANA zone that turns the venue's local event times into instants. */
  timezone: text("timezone").notNull(),
  /** Match radius in metres; null means the service default MATCH_RADIUS_M. */
  radiusM: integer("radius_m"),
});

export const performers = pgTable("performers", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  category: text("category"),
  imageUrl: text("image_url"),
});

/*
 * The catalog tables carry no foreign keys between them and no index beyond their primary keys. The
 * importer (src/store/catalog) is their only writer and checks every venue and performer reference in
 * its transaction, under a lock that serialises imports. Per-row foreign-key triggers, and secondary
 * indexes no query reads (events by venue, event_performers by performer), would more than double the
 * database's work per imported event, most of it in event_performers' two foreign-key checks
 * (docs/performance.md §5).
 */
export const events = pgTable("events", {
  id: integer("id").primaryKey(),
  name: text("name").notNull(),
  venueId: integer("venue_id").notNull(),
  /** Exactly as the catalog holds it (`YYYY-MM-DDTHH:MM:SS`): echoed to partners, never converted. */
  startsAtLocal: text("starts_at_local").notNull(),
  endsAtLocal: text("ends_at_local"),
  /** startsAtLocal read in the venue's zone (DST gap moves forward, overlap takes the earlier instant). */
  startsAt: timestamp("starts_at", { withTimezone: true, mode: "date" }).notNull(),
  /** endsAtLocal the same way; null when the catalog has no end (the default duration applies). */
  endsAt: timestamp("ends_at", { withTimezone: true, mode: "date" }),
  licensed: boolean("licensed").notNull().default(true),
  /** scheduled, rescheduled, postponed, cancelled or date_tbd; only the first two match (MATCHABLE_STATUSES). */
  status: text("status").notNull().default("scheduled"),
  /** The date is known and the time is not: the event spans the venue's whole local day(s). */
  timeUnknown: boolean("time_unknown").notNull().default(false),
});

export const eventPerformers = pgTable(
  "event_performers",
  {
    eventId: integer("event_id").notNull(),
    performerId: integer("performer_id").notNull(),
    isHeadliner: boolean("is_headliner"),
    /** Order of the performer in the catalog line, kept so billing order survives a round trip. */
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.performerId] })],
);

/**
 * One row (id = 1) whose version grows on every import. A running server polls it to learn that the
 * catalog changed without scanning the catalog tables.
 */
export const catalogState = pgTable("catalog_state", {
  id: integer("id").primaryKey(),
  version: bigint("version", { mode: "bigint" }).notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  /** When the last import committed, whether or not it changed anything (an unchanged one keeps the version). */
  importedAt: timestamp("imported_at", { withTimezone: true, mode: "date" }),
});

/**
 * Events an import corrected (start, end, venue, status, or their venue's place or zone), and the events
 * whose kept items the correction may now draw away: their kept items are placed again by a running server
 * (src/flows/corrections) once its index holds `version`. A row leaves when its items are done; a lease
 * lets another instance take over from one that stopped half-way.
 */
export const catalogCorrections = pgTable("catalog_corrections", {
  eventId: integer("event_id").primaryKey(),
  version: bigint("version", { mode: "number" }).notNull(),
  leasedUntil: timestamp("leased_until", { withTimezone: true, mode: "date" }),
});

/**
 * The integer id a feed's string id was given (docs/operations.md §3, *Feeds*): one row per (source,
 * kind, external id), written by the import that first met it and read by every later one. Feed ids are
 * drawn from `feed_ids`, from FIRST_FEED_ID up, a range catalog files may not use. An event the linking
 * rule matched to an existing event of another source shares that event's id (`linked`): its feed only
 * finds it, the source that created it keeps writing it.
 */
export const FIRST_FEED_ID = 1_000_000_000;
export const feedIds = pgSequence("feed_ids", { startWith: FIRST_FEED_ID, maxValue: 2_147_483_647 });

export const externalIds = pgTable(
  "external_ids",
  {
    source: text("source").notNull(),
    kind: text("kind").notNull(),
    externalId: text("external_id").notNull(),
    id: integer("id").notNull(),
    linked: boolean("linked").notNull().default(false),
  },
  // By id: the external ids `catalog lookup` lists for each event it finds.
  (t) => [primaryKey({ columns: [t.source, t.kind, t.externalId] }), index("external_ids_id").on(t.id)],
);
