import { type ErrorCode, ErrorEnvelope, statusOf } from "../errors.ts";
import type { RouteDefinition } from "../route.ts";
import type { JsonSchema } from "./documentedAs.ts";
import type { DocumentSchemas } from "./schemas.ts";

/** The response headers the service sends, each described once and referred to by every response. */
export const HEADERS: Record<string, JsonSchema> = {
  "X-Request-Id": {
    description:
      "The request's id, echoed when the request sent a sane one; quote it when reporting a problem",
    schema: { type: "string" },
  },
  "Cache-Control": {
    description: "Always `no-store`: every answer is about one partner's data at one moment",
    schema: { type: "string", const: "no-store" },
  },
  "Retry-After": {
    description: "Whole seconds, at least 1, after which the request would be admitted",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
  RateLimit: {
    description:
      'The budget\'s state when rate limits are enabled: `"read";r=42;t=17` (r requests left, t seconds until one comes back)',
    schema: { type: "string" },
  },
  "RateLimit-Policy": {
    description:
      'The budget\'s quota when rate limits are enabled: `"read";q=100;w=60` (q requests per w seconds)',
    schema: { type: "string" },
  },
  Allow: {
    description: "The methods this path answers",
    required: true,
    schema: { type: "string" },
  },
};

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** What each status means, whatever the route. */
const STATUS_DESCRIPTIONS: Record<number, string> = {
  200: "Success",
  201: "Created",
  400: "The request is malformed; `error.code` says how",
  401: "The key is missing, malformed, unknown, revoked or bound to the other environment",
  404: "No such user (or event) for this key",
  405: "This path does not answer this method; `Allow` lists the ones it does",
  408: "The request body did not arrive in time",
  413: "The body, or the batch in it, is too large",
  415: "The body is not sent as application/json",
  429: "A rate budget is spent; retry after `Retry-After` seconds",
  500: "An unexpected failure; retry with exponential backoff",
};

/**
 * The error codes a route can answer: the gate's, which follow from the route's policy, method and path
 * (docs/api.md §2: method, key, budget, path parameters, content type and body), then its own. Any
 * request may be `invalid_request`, if only for its Host header (§11).
 */
function errorCodesOf(route: RouteDefinition): ErrorCode[] {
  const codes: ErrorCode[] = ["invalid_request", "method_not_allowed", "internal_error"];
  if (route.policy.auth) codes.push("invalid_api_key");
  if (route.policy.budget !== null) codes.push("rate_limited");
  if (route.method === "POST") codes.push("unsupported_media_type", "payload_too_large", "request_timeout");
  if (route.path.includes(":user_id")) codes.push("user_not_found");
  return [...new Set([...codes, ...(route.errors ?? [])])];
}

/** The `Error` envelope with its `error.code` narrowed to the codes this status can carry here. */
function errorSchema(schemas: DocumentSchemas, codes: ErrorCode[]): JsonSchema {
  return {
    allOf: [
      schemas.of(ErrorEnvelope),
      {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code"],
            properties: { code: { type: "string", enum: codes } },
          },
        },
      },
    ],
  };
}

/** The headers a response of this route and status carries. */
function headersOf(route: RouteDefinition, status: number): Record<string, JsonSchema> {
  const rateHeaders = { RateLimit: header("RateLimit"), "RateLimit-Policy": header("RateLimit-Policy") };
  return {
    "X-Request-Id": header("X-Request-Id"),
    "Cache-Control": header("Cache-Control"),
    ...(route.policy.budget === null ? {} : rateHeaders),
    ...(status === 429 ? { "Retry-After": header("Retry-After") } : {}),
    ...(status === 405 ? { Allow: header("Allow") } : {}),
  };
}

const json = (schema: JsonSchema) => ({ "application/json": { schema } });

/** Every response of a route: its successes as its schema states them, then its errors by status. */
export function responsesOf(route: RouteDefinition, schemas: DocumentSchemas): Record<string, JsonSchema> {
  const { response, detail } = route.schema;
  const responses: Record<string, JsonSchema> = {};
  for (const [status, body] of Object.entries(response)) {
    responses[status] = {
      description: detail.answers?.[Number(status)] ?? STATUS_DESCRIPTIONS[Number(status)] ?? "Success",
      headers: headersOf(route, Number(status)),
      content: json(schemas.of(body)),
    };
  }
  const byStatus = Map.groupBy(errorCodesOf(route), (code) => statusOf[code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: STATUS_DESCRIPTIONS[status] ?? "Error",
      headers: headersOf(route, status),
      content: json(errorSchema(schemas, codes)),
    };
  }
  return responses;
}
