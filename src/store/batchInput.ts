import { type SQL, sql } from "drizzle-orm";
import { ATTENDANCE_COPIES_LOCK } from "./db.ts";
import { type BoundStatement, renderedOnce, type Slots } from "./renderedStatement.ts";

/*
 * What a media batch hands the store (`writeBatch`, src/store/ingest.ts) and the statement that opens
 * every batch's transaction: the user's sync mark and row lock.
 */

/** A media item that matched a licensed event: the only kind of item the service keeps (docs/api.md §4). */
export type KeptMedia = {
  mediaId: string;
  eventId: number;
  venueId: number;
  /** UTC instant as RFC 3339 text; the database keeps microseconds. */
  takenAt: string;
  latitude: number;
  longitude: number;
  mediaType: "photo" | "video";
  filename: string | null;
  durationSeconds: number | null;
  thumbnailUrl: string | null;
  deviceMake: string | null;
  deviceModel: string | null;
  deviceLensModel: string | null;
  /** The item's spot cell against the venue (`spotCell`). */
  spot?: { row: number; column: number };
  /** Whether the item lies in the venue's core (`spotCell`). */
  inCore?: boolean;
  /**
   * The item's confidence weight against the event (`itemWeight`). Every batch of the API sends it;
   * without it (fixtures that write media directly) the item counts toward its event's span only.
   */
  weight?: number;
};

export type BatchWrite = {
  userId: string;
  /** The partner whose key sent the batch: a user of another partner is no user at all. */
  partnerId: string;
  /** Every accepted id of the batch (unique). Those not in `kept` lose whatever match they had before. */
  acceptedIds: readonly string[];
  kept: readonly KeptMedia[];
  /**
   * MATCH_DEFAULT_DURATION_MINUTES, what an event without an end lasts for its confidence span; the
   * setting's default when not given.
   */
  defaultDurationMinutes?: number;
};

/** MATCH_DEFAULT_DURATION_MINUTES's default (src/config.ts). */
const DEFAULT_DURATION_MINUTES = 300;

/**
 * Every member of a kept item the batch statement writes, declared once: the `media` column it goes to,
 * the array type it travels as (one array parameter per member, `unnest`ed), the type it is stored as
 * where that differs, and how a kept item gives it. Every column list of the statement comes from here
 * (`keptColumns`), so a new member of kept media is one entry plus its mapping in and out.
 */
type KeptColumnSpec = {
  column: string;
  /**
   * The member as the partner sent it; absent for what placing the item derives (event, spot, core flag,
   * weight).
   */
  member?: keyof KeptMedia;
  sent: "text" | "int" | "float8" | "bool";
  stored?: "timestamptz";
  pick: (m: KeptMedia) => unknown;
};

/**
 * A boolean of an array parameter, which travels as text and is cast on arrival (`::text[]::bool[]`):
 * the PostgreSQL driver declares an array whose first element is a boolean a single boolean.
 */
export const booleanParam = (value: boolean | undefined): string | null =>
  value === undefined ? null : String(value);

/** The array type a member's parameter is cast to: a boolean's via text (`booleanParam`). */
const arrayCast = (sent: KeptColumnSpec["sent"]) => sql.raw(sent === "bool" ? "text[]::bool[]" : `${sent}[]`);

const KEPT_COLUMNS = {
  mediaIds: { column: "media_id", member: "mediaId", sent: "text", pick: (m) => m.mediaId },
  eventIds: { column: "event_id", sent: "int", pick: (m) => m.eventId },
  venueIds: { column: "venue_id", sent: "int", pick: (m) => m.venueId },
  takenAts: {
    column: "taken_at",
    member: "takenAt",
    sent: "text",
    stored: "timestamptz",
    pick: (m) => m.takenAt,
  },
  latitudes: { column: "latitude", member: "latitude", sent: "float8", pick: (m) => m.latitude },
  longitudes: { column: "longitude", member: "longitude", sent: "float8", pick: (m) => m.longitude },
  mediaTypes: { column: "media_type", member: "mediaType", sent: "text", pick: (m) => m.mediaType },
  filenames: { column: "filename", member: "filename", sent: "text", pick: (m) => m.filename },
  durationsSeconds: {
    column: "duration_seconds",
    member: "durationSeconds",
    sent: "float8",
    pick: (m) => m.durationSeconds,
  },
  thumbnailUrls: {
    column: "thumbnail_url",
    member: "thumbnailUrl",
    sent: "text",
    pick: (m) => m.thumbnailUrl,
  },
  deviceMakes: { column: "device_make", member: "deviceMake", sent: "text", pick: (m) => m.deviceMake },
  deviceModels: { column: "device_model", member: "deviceModel", sent: "text", pick: (m) => m.deviceModel },
  deviceLensModels: {
    column: "device_lens_model",
    member: "deviceLensModel",
    sent: "text",
    pick: (m) => m.deviceLensModel,
  },
  spotRows: { column: "spot_row", sent: "int", pick: (m) => m.spot?.row ?? null },
  spotColumns: { column: "spot_col", sent: "int", pick: (m) => m.spot?.column ?? null },
  inCores: { column: "in_core", sent: "bool", pick: (m) => booleanParam(m.inCore) },
  weights: { column: "weight", sent: "float8", pick: (m) => m.weight ?? null },
} satisfies Record<string, KeptColumnSpec>;
type KeptColumn = keyof typeof KEPT_COLUMNS;

const keptEntries = Object.entries(KEPT_COLUMNS) as [KeptColumn, KeptColumnSpec][];
/** The members an upsert may change: all but the key (the user and `media_id`). */
const changeable = keptEntries.filter(([, spec]) => spec.column !== "media_id");
const list = (parts: SQL[]) => sql.join(parts, sql`, `);
const column = (spec: KeptColumnSpec, prefix = "") => sql.raw(`${prefix}${spec.column}`);

/**
 * The columns holding what the partner sent with a kept item, each with its member: what placing an item
 * again (after a catalog correction, src/store/corrections.ts) reads back, instants as UTC text to the
 * microsecond the store keeps.
 */
export const sentColumns = {
  select: list(
    keptEntries.flatMap(([, spec]) => {
      if (spec.member === undefined) return [];
      return spec.stored === "timestamptz"
        ? [
            sql`to_char(${column(spec)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ${column(spec)}`,
          ]
        : [column(spec)];
    }),
  ),
  /** A row of `select` as the members a batch would have sent. */
  members(
    row: Record<string, unknown>,
  ): Omit<KeptMedia, "eventId" | "venueId" | "spot" | "inCore" | "weight"> {
    const members: Record<string, unknown> = {};
    for (const [, spec] of keptEntries)
      if (spec.member !== undefined) members[spec.member] = row[spec.column];
    return members as Omit<KeptMedia, "eventId" | "venueId" | "spot" | "inCore" | "weight">;
  },
};

/** The column lists of the batch statement, each derived from `KEPT_COLUMNS`. */
export const keptColumns = {
  /** The rows the batch keeps, typed as stored: `select * from unnest(...) as i(...)`. */
  incoming: (slots: Slots<BatchSlot>) =>
    sql`select * from unnest(${list(
      keptEntries.map(([slot, spec]) => sql`${slots[slot]}::${arrayCast(spec.sent)}`),
    )}) as i(${list(keptEntries.map(([, spec]) => column(spec)))})`,
  /** The stored columns, in the order `values` gives them. */
  names: list(keptEntries.map(([, spec]) => column(spec))),
  /** Each member of `incoming` as its column stores it. */
  values: list(
    keptEntries.map(([, spec]) =>
      spec.stored === undefined ? column(spec) : sql`${column(spec)}::${sql.raw(spec.stored)}`,
    ),
  ),
  /** The upsert's update of every changeable column. */
  updates: list(changeable.map(([, spec]) => sql`${column(spec)} = ${column(spec, "excluded.")}`)),
  /** Whether the stored row differs from the incoming one in any changeable column. */
  changed: sql`(${list(changeable.map(([, spec]) => column(spec, "media.")))})
        is distinct from (${list(changeable.map(([, spec]) => column(spec, "excluded.")))})`,
};

/** The batch statement's values, one slot each: the user, the accepted ids, the setting, the columns. */
export type BatchSlot = "userId" | "acceptedIds" | "defaultDurationMinutes" | KeptColumn;
export const BATCH_SLOTS: readonly BatchSlot[] = [
  "userId",
  "acceptedIds",
  "defaultDurationMinutes",
  ...(Object.keys(KEPT_COLUMNS) as KeptColumn[]),
];

export function batchValues({
  userId,
  acceptedIds,
  kept,
  defaultDurationMinutes = DEFAULT_DURATION_MINUTES,
}: BatchWrite): Record<BatchSlot, unknown> {
  const values: Partial<Record<BatchSlot, unknown>> = { userId, acceptedIds, defaultDurationMinutes };
  for (const [name, spec] of keptEntries) values[name] = kept.map(spec.pick);
  return values as Record<BatchSlot, unknown>;
}

/**
 * What the batch statement runs under until the commit (the read after the batch included), and why:
 * - sequential scans priced out: a plan made while `media` was nearly empty would scan it as it grows;
 * - the generic plan forced: a connection whose first batches kept nothing would plan every batch anew.
 */
const PLAN_SETTINGS = sql`set_config('enable_seqscan', 'off', true),
  set_config('plan_cache_mode', 'force_generic_plan', true)`;

/** The settings a batch statement runs under, for a transaction that does not start with the sync mark. */
export const batchPlanSettings = sql`select ${PLAN_SETTINGS}`;

const syncMark = renderedOnce(
  ["userId", "partnerId", "writes"],
  ({
    userId,
    partnerId,
    writes,
  }) => sql`select open_user_batch(${userId}::uuid, ${partnerId}, ${writes}::boolean)
    as last_sync_ms, ${PLAN_SETTINGS}
    from pg_advisory_xact_lock_shared(${ATTENDANCE_COPIES_LOCK}::int8) as copies_lock`,
);

/**
 * The user's sync mark and row lock, and the batch's user lookup: `open_user_batch` in src/store/sql/sync_mark.sql.
 * It first takes ATTENDANCE_COPIES_LOCK shared (a function in FROM runs before the select list), before
 * any statement of the batch reads an event, so a catalog import's refresh of user_events waits for it.
 * It also sets what the batch statement runs under (`PLAN_SETTINGS`), which lasts until the commit.
 */
export function syncMarkStatement({ userId, partnerId, acceptedIds }: BatchWrite): BoundStatement {
  return syncMark({ userId, partnerId, writes: acceptedIds.length > 0 });
}

/** What `open_user_batch` raises when the partner has no such user. */
export const NO_SUCH_USER = "P0002";
