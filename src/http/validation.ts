import { KindGuard, type ObjectOptions, type TProperties, type TSchema } from "@sinclair/typebox";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { t, type ValidationError } from "elysia";
import { isCharacterLimitFormat } from "../store/text.ts";
import { ApiError, type ISSUE_REASONS } from "./errors.ts";
import { isOutOfRangeInteger } from "./formats.ts";

/**
 * The schema of what a request sends: its JSON body or its query string. Unknown members are allowed
 * through (docs/api.md §1: ignored; a query's cache-busting `_=` as well) and left where they are: the
 * handlers read the members they know, field by field, so nothing unknown reaches the store or a
 * response. Said explicitly because the framework otherwise closes the top-level object. With the
 * app's `normalize: false` it then neither copies the input nor deletes members from it, work that
 * shows in the server's CPU on large batches (docs/performance.md §7).
 */
export function openObject<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return t.Object(properties, { ...options, additionalProperties: true });
}

export type IssueReason = (typeof ISSUE_REASONS)[number];

/** One schema failure, with its JSON path split into segments (`/media/3/id` -> ["media", 3, "id"]). */
export type Issue = { path: (string | number)[]; reason: IssueReason };

function reasonOf(error: ValueError): IssueReason {
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
    case ValueErrorType.StringMinLength:
      return "required";
    case ValueErrorType.StringMaxLength:
      return "max_length";
    case ValueErrorType.StringFormat: {
      const format = KindGuard.IsString(error.schema) ? error.schema.format : undefined;
      if (isCharacterLimitFormat(format)) return "max_length";
      return isOutOfRangeInteger(format, error.value) ? "range" : "type";
    }
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      // A number the check refused for being a number at all is an infinity: `1e400` in the JSON text.
      return typeof error.value === "number" && !Number.isFinite(error.value) ? "range" : "type";
    case ValueErrorType.Literal:
      return "enum";
    case ValueErrorType.ArrayMaxItems:
    case ValueErrorType.ArrayMinItems:
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
      return "range";
    default:
      return "type";
  }
}

/** Whether a value has the JSON type a union's variant describes. */
function hasTypeOf(variant: TSchema, value: unknown): boolean {
  if (KindGuard.IsString(variant)) return typeof value === "string";
  if (KindGuard.IsNumber(variant) || KindGuard.IsInteger(variant)) return typeof value === "number";
  if (KindGuard.IsBoolean(variant)) return typeof value === "boolean";
  if (KindGuard.IsArray(variant)) return Array.isArray(value);
  if (KindGuard.IsObject(variant))
    return value !== null && typeof value === "object" && !Array.isArray(value);
  return false;
}

/**
 * What a failed value is, as a path and a reason. A union only says that no variant fitted, so an
 * optional member (`string | null`) would always fail with `type`. When the value has the JSON type
 * of exactly one variant, that variant's first error says what is wrong (a length, or a member deep
 * inside an object, with its own path) and stands for the union. A value of the type of a union of
 * literals is outside the enum.
 */
export function explain(error: ValueError): { path: string; reason: IssueReason } {
  if (error.type === ValueErrorType.Union && KindGuard.IsUnion(error.schema)) {
    const variants = error.schema.anyOf;
    if (variants.some((v) => KindGuard.IsLiteral(v) && typeof v.const === typeof error.value)) {
      return { path: error.path, reason: "enum" };
    }
    const fitting = variants.flatMap((variant, i) => (hasTypeOf(variant, error.value) ? [i] : []));
    const inner = fitting.length === 1 ? error.errors[fitting[0] ?? 0]?.First() : undefined;
    if (inner) return explain(inner);
  }
  return { path: error.path, reason: reasonOf(error) };
}

function segments(path: string): (string | number)[] {
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replaceAll("~1", "/").replaceAll("~0", "~")));
}

/** Flattens a framework validation error into issues, one per failing path (the first reason wins). */
export function issuesOf(error: ValidationError): Issue[] {
  const byPath = new Map<string, Issue>();
  for (const e of error.all) {
    if (!("path" in e) || typeof e.path !== "string") continue;
    const { path, reason } = explain(e);
    if (!byPath.has(path)) byPath.set(path, { path: segments(path), reason });
  }
  return [...byPath.values()];
}

/** Turns a route's schema failures into the partner's error; each resource may supply its own. */
export type ValidationTranslator = (issues: Issue[], location: string) => ApiError;

/** The default: 400 invalid_request naming the failing fields. */
export const invalidRequest: ValidationTranslator = (issues, location) =>
  new ApiError("invalid_request", `The request ${location} failed validation.`, {
    fields: issues.map((i) => ({ field: i.path.join("."), reason: i.reason })),
  });
