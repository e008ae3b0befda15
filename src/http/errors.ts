import { type Static, Type } from "@sinclair/typebox";
import { jsonResponse } from "./jsonResponse.ts";

/**
 * Every error code a partner can see (docs/api.md §11): the specification's table plus its additions
 * (payload_too_large, request_timeout, event_not_found). Closed on purpose: adding a code means adding its status below.
 */
export type ErrorCode =
  | "invalid_api_key"
  | "user_not_found"
  | "event_not_found"
  | "invalid_email"
  | "empty_batch"
  | "invalid_batch_size"
  | "invalid_media_item"
  | "invalid_cursor"
  | "rate_limited"
  | "internal_error"
  | "unsupported_media_type"
  | "payload_too_large"
  | "request_timeout"
  | "invalid_request"
  | "not_found"
  | "method_not_allowed";

export const statusOf = {
  invalid_api_key: 401,
  user_not_found: 404,
  event_not_found: 404,
  invalid_email: 400,
  empty_batch: 400,
  invalid_batch_size: 413,
  invalid_media_item: 400,
  invalid_cursor: 400,
  rate_limited: 429,
  internal_error: 500,
  unsupported_media_type: 415,
  payload_too_large: 413,
  request_timeout: 408,
  invalid_request: 400,
  not_found: 404,
  method_not_allowed: 405,
} as const satisfies Record<ErrorCode, number>;

/** Why a field failed, in the closed vocabulary of docs/api.md §4 (`details.items[].reason`). */
export const ISSUE_REASONS = ["required", "type", "max_length", "enum", "range"] as const;

const Reason = Type.Union(ISSUE_REASONS.map((reason) => Type.Literal(reason)));

/** What `details` holds, by code (docs/api.md §11); present only where it adds something. */
const ErrorDetails = Type.Object(
  {
    fields: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), reason: Reason }), {
        description: "invalid_request: the failing fields, by path",
      }),
    ),
    items: Type.Optional(
      Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), field: Type.String(), reason: Reason }), {
        description: "invalid_media_item: every offending item of the batch",
      }),
    ),
    received: Type.Optional(
      Type.Integer({ description: "invalid_batch_size: how many items or ids were sent" }),
    ),
  },
  { title: "ErrorDetails" },
);

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Union((Object.keys(statusOf) as ErrorCode[]).map((code) => Type.Literal(code))),
      message: Type.String(),
      details: Type.Optional(Type.Union([ErrorDetails, Type.Null()])),
    }),
  },
  {
    title: "Error",
    examples: [
      {
        error: {
          code: "invalid_media_item",
          message: "One or more media items failed validation; nothing was stored.",
          details: { items: [{ index: 0, field: "media_type", reason: "enum" }] },
        },
      },
    ],
  },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** A failure meant for the partner: its message is written for them and safe to show. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get status(): number {
    return statusOf[this.code];
  }
}

export function envelopeOf(error: ApiError): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === null ? {} : { details: error.details }),
    },
  };
}

export function errorResponse(error: ApiError): Response {
  return jsonResponse(JSON.stringify(envelopeOf(error)), { status: error.status, headers: error.headers });
}

/** The answer to anything unexpected: the cause goes to the log, never to the partner. */
export const internalError = (): ApiError =>
  new ApiError("internal_error", "An unexpected error occurred; retry with exponential backoff.");
