import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { t } from "elysia";
import { unstorableStringPaths } from "../store/text.ts";
import { ApiError } from "./errors.ts";
import { limitedString } from "./formats.ts";
import { nullReadAsAbsent } from "./openapi/documentedAs.ts";
import {
  explain,
  type Issue,
  type IssueReason,
  invalidRequest,
  openObject,
  type ValidationTranslator,
} from "./validation.ts";

/** docs/api.md §4: a batch carries 1 to 200 items; more is 413 invalid_batch_size. */
export const MAX_BATCH_ITEMS = 200;

/** The longest `thumbnail_url` and other descriptive string of an item, in characters (docs/api.md §4). */
export const MAX_THUMBNAIL_URL_CHARACTERS = 2048;
export const MAX_ITEM_TEXT_CHARACTERS = 255;

/** An optional member of an item: null reads as absent (see `normalizeItems`), so the document allows it. */
const optional = <T extends TSchema>(schema: T) => nullReadAsAbsent(t.Optional(schema));

/** An optional descriptive member: every answer repeats it, so it is bounded like `id`. */
const itemText = (max = MAX_ITEM_TEXT_CHARACTERS, note = "") =>
  optional(limitedString(max, { description: `${note}At most ${max} characters (Unicode code points)` }));

/**
 * One media item as the request carries it (docs/api.md §4). Optional members sent as null are dropped
 * before this schema runs (see `normalizeItems`), so null reads as absent: a null `taken_at` or coordinate
 * becomes the per-item rejection of docs/api.md §4 rather than a request-level type error.
 */
export const RequestMediaItem = t.Object(
  {
    id: limitedString(MAX_ITEM_TEXT_CHARACTERS, {
      minLength: 1,
      description: "The asset's stable id, the deduplication key: 1 to 255 characters (Unicode code points)",
    }),
    taken_at: optional(
      t.String({
        description:
          "RFC 3339 with Z or a numeric offset; absent is the rejection missing_taken_at, one without an offset is invalid",
      }),
    ),
    latitude: optional(t.Number({ description: "-90 to 90; outside it the item is rejected invalid" })),
    longitude: optional(t.Number({ description: "-180 to 180; outside it the item is rejected invalid" })),
    media_type: optional(
      t.Union([t.Literal("photo"), t.Literal("video")], { description: "photo when absent" }),
    ),
    filename: itemText(),
    duration_seconds: optional(t.Number({ minimum: 0 })),
    thumbnail_url: itemText(MAX_THUMBNAIL_URL_CHARACTERS, "Stored verbatim, never fetched. "),
    device_make: itemText(),
    device_model: itemText(),
    device_lens_model: itemText(),
  },
  {
    title: "MediaItem",
    examples: [
      {
        id: "IMG_0001",
        taken_at: "2025-07-16T21:15:00+09:00",
        latitude: 37.5155,
        longitude: 127.0726,
        media_type: "photo",
        filename: "IMG_0001.HEIC",
      },
    ],
  },
);
export type RequestMediaItem = typeof RequestMediaItem.static;

export const MediaBatchBody = openObject(
  { media: t.Array(RequestMediaItem, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) },
  { title: "MediaBatch" },
);

const itemChecker = TypeCompiler.Compile(RequestMediaItem);

/** The members whose null means "not sent"; `id` is required, so a null id stays a type error. */
const NULLABLE_MEMBERS = Object.keys(RequestMediaItem.properties).filter((name) => name !== "id");

/**
 * Every failing member of one item, each once: schema failures in schema order, then members holding
 * a malformed string (a `type` failure, docs/api.md §13), looked for only when the body's text could hold
 * one. A non-object item is one issue.
 */
function itemIssues(item: unknown, index: number, mayHoldMalformed: boolean): Issue[] {
  const valid = itemChecker.Check(item);
  // The common case, a valid item in a body that cannot hold a malformed string, allocates nothing.
  if (valid && !mayHoldMalformed) return [];
  const byField = new Map<string, IssueReason>();
  if (!valid) {
    for (const error of itemChecker.Errors(item)) {
      const { path, reason } = explain(error);
      const field = path.split("/")[1] ?? "";
      if (!byField.has(field)) byField.set(field, reason);
    }
  }
  if (mayHoldMalformed) {
    for (const [field = ""] of unstorableStringPaths(item)) {
      if (!byField.has(String(field))) byField.set(String(field), "type");
    }
  }
  return [...byField].map(([field, reason]) => ({
    path: ["media", index, field === "" ? "item" : field],
    reason,
  }));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A JSON number beyond the range of a double (`1e400`) parses as an infinity, which no schema takes for
 * a number. A coordinate that large is simply out of range, like `1e300`: a per-item `invalid`
 * (docs/api.md §4), not a request-level type error, so it becomes the largest finite number of its sign.
 */
const COORDINATES = ["latitude", "longitude"] as const;

/**
 * Drops optional members sent as null, in place, so the schema and the handler read them as absent,
 * and brings infinite coordinates back into the numbers (see COORDINATES).
 */
function normalizeItems(items: unknown[]): void {
  for (const item of items) {
    if (!isPlainObject(item)) continue;
    for (const name of NULLABLE_MEMBERS) {
      if (item[name] === null) delete item[name];
    }
    for (const name of COORDINATES) {
      const value = item[name];
      if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY) {
        item[name] = Math.sign(value) * Number.MAX_VALUE;
      }
    }
  }
}

/** docs/api.md §4: the offending items of a batch, every one of them, as `{index, field, reason}`. */
export const translateMediaIssues: ValidationTranslator = (issues, location) => {
  const items = issues.filter((i) => i.path[0] === "media" && typeof i.path[1] === "number");
  if (items.length === 0) return invalidRequest(issues, location);
  return new ApiError(
    "invalid_media_item",
    "One or more media items failed validation; nothing was stored.",
    {
      items: items.map((i) => ({ index: i.path[1], field: String(i.path[2] ?? "item"), reason: i.reason })),
    },
  );
};

/**
 * Runs before the framework's schema validation, in the order of docs/api.md §2: the batch size first (so an
 * oversized batch is 413 whatever its items hold), then every item. Items are checked here rather than
 * left to the framework because its error list stops after 64 entries and docs/api.md §4 lists all of them.
 * A body whose `media` is not an array is left to the schema (400 invalid_request). Malformed strings
 * inside items are this check's too (the gate left them here, see `RoutePolicy.itemsChecked`), so a
 * batch of 201 items is 413 whatever they hold, and every offending item is listed.
 */
export function checkMediaBatch(body: unknown, mayHoldMalformed: boolean): void {
  const { media: items } = isPlainObject(body) ? body : {};
  if (!Array.isArray(items)) return;
  if (items.length === 0) throw new ApiError("empty_batch", "The media array is empty; send 1 to 200 items.");
  if (items.length > MAX_BATCH_ITEMS) {
    throw new ApiError(
      "invalid_batch_size",
      `A batch holds at most ${MAX_BATCH_ITEMS} items; split it and resend.`,
      { received: items.length },
    );
  }
  normalizeItems(items);
  const issues = items.flatMap((item, index) => itemIssues(item, index, mayHoldMalformed));
  if (issues.length > 0) throw translateMediaIssues(issues, "body");
}
