import type { TProperties } from "@sinclair/typebox";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { t, type ValidationError } from "elysia";
import { ApiError } from "./errors.ts";

/**
 * The schema of what a request sends: its JSON body or its query string. Unknown members are allowed
 * through (contract §1: ignored; a query's cache-busting `_=` as well) and left where they are: the
 * handlers read the members they know, field by field, so nothing unknown reaches the store or a
 * response. Said explicitly because the framework otherwise closes the top-level object. With the
 * app's `normalize: false` it then neither copies the input nor deletes members from it, which on
 * 200-item batches was 5% of the server's CPU.
 */
export function openObject<T extends TProperties>(properties: T) {
  return t.Object(properties, { additionalProperties: true });
}

/** Why a field failed, in the closed vocabulary of contract §4 (`details.items[].reason`). */
export type IssueReason = "required" | "type" | "max_length" | "enum" | "range";

/** One schema failure, with its JSON path split into segments (`/media/3/id` -> ["media", 3, "id"]). */
export type Issue = { path: (string | number)[]; reason: IssueReason };

function reasonOf(type: ValueErrorType): IssueReason {
  switch (type) {
    case ValueErrorType.ObjectRequiredProperty:
    case ValueErrorType.StringMinLength:
      return "required";
    case ValueErrorType.StringMaxLength:
      return "max_length";
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
    if (!("path" in e) || typeof e.path !== "string" || byPath.has(e.path)) continue;
    byPath.set(e.path, { path: segments(e.path), reason: reasonOf(e.type) });
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
