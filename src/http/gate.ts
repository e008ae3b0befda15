import type { RateLimits } from "../limits/index.ts";
import { type JsonPath, unstorableStringPaths } from "../store/text.ts";
import type { Authenticator, Partner } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { ApiError } from "./errors.ts";
import type { GateRouter, RoutePolicy } from "./gateRouter.ts";

/** What the gate learned about a request, for the handlers and the response headers. */
export type RequestContext = {
  /** The route's pattern (`/v1/users/:user_id/media`), or null for a path the API does not serve. */
  route: string | null;
  /** The budget the route spends, for the 429 counter. */
  budget: string | null;
  partner: Partner | null;
  /** RateLimit headers to put on the response of a limited endpoint. */
  rateHeaders: Record<string, string>;
  body: unknown;
  /** Whether the body's text could hold a malformed string at all (see body.ts). */
  mayHoldMalformed: boolean;
};

/**
 * Requests are keyed by identity: the gate runs before the framework parses anything, and the
 * handlers, the body parser and the server wrapper read what it found through this map.
 */
const contexts = new WeakMap<Request, RequestContext>();

export function contextOf(request: Request): RequestContext | undefined {
  return contexts.get(request);
}

/** The partner the gate authenticated; only routes with `auth: true` reach a handler that asks. */
export function partnerOf(request: Request): Partner {
  const partner = contexts.get(request)?.partner;
  if (!partner) throw new Error("partnerOf called on a route the gate did not authenticate");
  return partner;
}

/**
 * The request's URL. The runtime builds it from the Host header, so one that does not parse
 * (`Host: x:99999`, `Host: a b`) is the client's malformed request, not a failure of ours.
 */
function urlOf(request: Request): URL {
  // Two Host lines reach the service joined by a comma (the runtime routes by the first); RFC 9112
  // §3.2 wants a 400 for more than one, and a host name never holds a comma.
  if (request.headers.get("host")?.includes(",")) {
    throw new ApiError("invalid_request", "The request has more than one Host header.");
  }
  try {
    return new URL(request.url);
  } catch {
    throw new ApiError("invalid_request", "The Host header does not name a valid host.");
  }
}

export type GateDeps = {
  router: GateRouter;
  authenticate: Authenticator;
  limits: RateLimits;
};

/**
 * docs/api.md §2, in its order, before the framework sees the request: route (404/405), key (401),
 * budget (429), path parameters (400), then Content-Type, size and JSON of the body (415/413/400).
 * The framework's schema validation and the handlers' own rules come after.
 */
export function createGate({ router, authenticate, limits }: GateDeps) {
  return async (request: Request): Promise<void> => {
    const url = urlOf(request);
    const found = router.match(request.method, url.pathname);
    const context: RequestContext = {
      route: found.kind === "route" ? found.pattern : null,
      budget: found.kind === "route" ? found.policy.budget : null,
      partner: null,
      rateHeaders: {},
      body: undefined,
      mayHoldMalformed: false,
    };
    contexts.set(request, context);
    if (found.kind === "not_found") throw new ApiError("not_found", "No such path.");
    if (found.kind === "method_not_allowed") {
      throw new ApiError("method_not_allowed", `Use ${found.allow.join(", ")} on this path.`, null, {
        allow: found.allow.join(", "),
      });
    }
    const { policy } = found;
    if (policy.auth) context.partner = await authenticate(request.headers.get("x-partner-api-key"));
    if (policy.budget !== null && context.partner !== null) {
      const admission = await limits.admit(context.partner, policy.budget);
      context.rateHeaders = admission.headers;
      if (!admission.admitted) {
        throw new ApiError("rate_limited", `The ${policy.budget} budget is spent; retry later.`, null, {
          ...admission.headers,
          "retry-after": String(admission.retryAfterSeconds),
        });
      }
    }
    const badParams = router.invalidParams(found.params);
    if (badParams.length > 0) {
      throw new ApiError("invalid_request", `Malformed path parameter: ${badParams.join(", ")}.`, {
        fields: badParams.map((field) => ({ field, reason: "type" })),
      });
    }
    if (request.method === "POST") {
      const { value, mayHoldMalformed } = await readJsonBody(request);
      context.body = value;
      context.mayHoldMalformed = mayHoldMalformed;
      if (mayHoldMalformed) rejectMalformedStrings(value, policy);
    }
  };
}

/**
 * Whether a malformed string at this path is the route's own business: inside an item of the array it
 * checks itself (`RoutePolicy.itemsChecked`), or within a member it drops (`RoutePolicy.dropsMalformed`).
 */
function leftToRoute(path: JsonPath, policy: RoutePolicy): boolean {
  if (policy.itemsChecked !== undefined && path[0] === policy.itemsChecked && typeof path[1] === "number") {
    return true;
  }
  const member = path[0];
  return typeof member === "string" && (policy.dropsMalformed?.includes(member) ?? false);
}

/**
 * docs/api.md §13: a string PostgreSQL would not store as sent (U+0000, an unpaired surrogate), member
 * names included, is malformed input. Every such string is named, as the schema's failures are.
 */
function rejectMalformedStrings(body: unknown, policy: RoutePolicy): void {
  const paths = unstorableStringPaths(body).filter((path) => !leftToRoute(path, policy));
  if (paths.length === 0) return;
  throw new ApiError("invalid_request", "The body contains a string with U+0000 or an unpaired surrogate.", {
    fields: paths.map((path) => ({ field: path.join("."), reason: "type" })),
  });
}
