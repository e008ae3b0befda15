import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { characterLimitFormat, mayHoldUnstorableString, unstorableStringPaths } from "../text.ts";
import { EVENT_STATUSES } from "./eventStatus.ts";

/**
 * The three record types of a catalog file (docs/operations.md §3), one JSON object a line. Each field carries a
 * description in an operator's words: a bad line is reported as "field: expected <description>".
 * Unknown fields are ignored, so a catalog producer can add fields before rollcall knows them.
 */

/** Ids are PostgreSQL integers and the API takes positive integers. */
const Id = Type.Integer({
  minimum: 1,
  maximum: 2_147_483_647,
  description: "an integer from 1 to 2147483647",
});
const Name = Type.String({
  minLength: 1,
  format: characterLimitFormat(1000),
  description: "a non-empty string of at most 1000 characters",
});
const nullableText = (max: number) =>
  Type.Union([Type.String({ format: characterLimitFormat(max) }), Type.Null()], {
    description: `a string of at most ${max} characters, or null`,
  });

/** Festival grounds reach a few kilometres; beyond 10 km a "venue" is a region and would match everything. */
export const MAX_RADIUS_M = 10_000;

const VenueSchema = Type.Object({
  type: Type.Literal("venue"),
  id: Id,
  name: Name,
  city: nullableText(200),
  region: Type.Optional(nullableText(200)),
  country: nullableText(100),
  latitude: Type.Number({ minimum: -90, maximum: 90, description: "a number from -90 to 90" }),
  longitude: Type.Number({ minimum: -180, maximum: 180, description: "a number from -180 to 180" }),
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "an IANA time zone such as Europe/Paris",
  }),
  radius_m: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: MAX_RADIUS_M }), Type.Null()], {
      description: `an integer from 1 to ${MAX_RADIUS_M} (metres), or null`,
    }),
  ),
});

const PerformerSchema = Type.Object({
  type: Type.Literal("performer"),
  id: Id,
  name: Name,
  category: Type.Optional(nullableText(100)),
  image_url: Type.Optional(nullableText(2000)),
});

const LOCAL_TIME = "a local date-time YYYY-MM-DDTHH:MM:SS";

const EventSchema = Type.Object({
  type: Type.Literal("event"),
  id: Id,
  name: Name,
  venue_id: Id,
  starts_at_local: Type.String({ description: LOCAL_TIME }),
  ends_at_local: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: `${LOCAL_TIME}, or null` }),
  ),
  licensed: Type.Optional(Type.Boolean({ description: "true or false" })),
  status: Type.Optional(
    Type.Union(
      EVENT_STATUSES.map((status) => Type.Literal(status)),
      { description: `one of ${EVENT_STATUSES.map((s) => `"${s}"`).join(", ")}` },
    ),
  ),
  time_unknown: Type.Optional(Type.Boolean({ description: "true or false" })),
  performers: Type.Array(
    Type.Object(
      {
        id: Id,
        is_headliner: Type.Optional(
          Type.Union([Type.Boolean(), Type.Null()], { description: "true, false or null" }),
        ),
      },
      { description: "an object {id, is_headliner}" },
    ),
    { maxItems: 500, description: "an array of at most 500 {id, is_headliner} objects" },
  ),
});

export type VenueRecord = Static<typeof VenueSchema>;
export type PerformerRecord = Static<typeof PerformerSchema>;
export type EventRecord = Static<typeof EventSchema>;
export type CatalogRecord = VenueRecord | PerformerRecord | EventRecord;

const checkers = {
  venue: TypeCompiler.Compile(VenueSchema),
  performer: TypeCompiler.Compile(PerformerSchema),
  event: TypeCompiler.Compile(EventSchema),
};

/** `/performers/0/id` reads better as `performers[0].id`. */
function fieldName(path: string): string {
  return path
    .slice(1)
    .split("/")
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join("");
}

function describe(schema: TSchema): string {
  return typeof schema.description === "string" ? schema.description : "a value of another type";
}

/** How much of an offending value a report echoes: enough to find it, never a megabyte per line. */
const SHOWN_CHARACTERS = 80;

/** Characters a terminal would act on or hide: format controls (bidi overrides), line separators. */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * An offending value as the report shows it: JSON (control characters escaped), invisible characters
 * escaped too, cut short in characters (code points, as every limit counts them), and an infinity
 * (`1e400`) by name.
 */
function shown(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  const text = (JSON.stringify(value) ?? String(value)).replace(
    INVISIBLE,
    (character) => `\\u${character.codePointAt(0)?.toString(16).padStart(4, "0")}`,
  );
  const characters = [...text];
  return characters.length <= SHOWN_CHARACTERS
    ? text
    : `${characters.slice(0, SHOWN_CHARACTERS).join("")}… (${characters.length} characters)`;
}

function firstProblem(checker: (typeof checkers)[keyof typeof checkers], value: unknown): string {
  const error = checker.Errors(value).First();
  if (error === undefined) return "invalid record";
  const field = fieldName(error.path);
  if (error.value === undefined) return `${field} is required`;
  return `${field}: expected ${describe(error.schema)}, got ${shown(error.value)}`;
}

export type ParsedLine = { record: CatalogRecord } | { error: string };

/** Parses and shape-checks one line; the checks that need other lines live in the assembler. */
export function parseRecord(line: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: "not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { error: "expected a JSON object" };
  }
  const type = (value as { type?: unknown }).type;
  if (type !== "venue" && type !== "performer" && type !== "event") {
    return { error: `type: expected "venue", "performer" or "event", got ${shown(type ?? null)}` };
  }
  const checker = checkers[type];
  if (!checker.Check(value)) return { error: firstProblem(checker, value) };
  if (mayHoldUnstorableString(line) && unstorableStringPaths(value).length > 0) {
    return { error: "a string contains U+0000 or an unpaired surrogate" };
  }
  return { record: value as CatalogRecord };
}
