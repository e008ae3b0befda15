import type { Readiness } from "../observability/instance.ts";
import { ACCESS_EVENT, throttled } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import { RequestScope, withinScope } from "../store/requestScope.ts";
import type { App, Log } from "./app.ts";
import { BODY_TIMEOUT_MS, dropUnreadBody } from "./body.ts";
import { ApiError, errorResponse, internalError } from "./errors.ts";
import { contextOf, type RequestContext } from "./gate.ts";
import { JSON_MEDIA_TYPE } from "./jsonResponse.ts";

/** An incoming X-Request-Id is echoed only when it is a sane token; anything else gets a fresh id. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * No runtime limit of its own, so that every 413 is ours, with the envelope and after the key check
 * (docs/api.md §2), however large the upload: the body reader refuses a declared length over the 2 MiB
 * cap before reading any of it, and stops reading a chunked body as soon as it crosses the cap.
 */
const RUNTIME_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The framework finds a request's path by searching its URL for the first "/" from the twelfth
 * character on, which assumes a host of at least four characters after "http://": a request to
 * `Host: api` would be routed as an unknown path. Such requests are rebuilt with a host it can read
 * (nothing in the service reads the host); a URL that does not parse is left for the gate to refuse.
 * An HTTP/1.0 request may leave Host out, and then arrives with a bare path for its URL (the runtime
 * refuses HTTP/1.1 without one): it is given the same host. The common case costs one search of the URL.
 */
const SCHEME = "http://";
const SHORTEST_ROUTABLE_HOST = 4;

function routable(request: Request): Request {
  if (request.url.startsWith("/") && !request.headers.has("host")) {
    return new Request(`${SCHEME}localhost${request.url}`, request);
  }
  const pathStart = request.url.indexOf("/", SCHEME.length);
  if (pathStart >= SCHEME.length + SHORTEST_ROUTABLE_HOST) return request;
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return request;
  }
  return new Request(`${SCHEME}localhost${url.pathname}${url.search}`, request);
}

/**
 * How long a request may take before it is answered 500 internal_error anyway: under the runtime's
 * 10 s idle timeout, which would otherwise close the connection with no answer at all. Whatever the
 * request still holds in the database is called off at that moment (requestScope.ts); a write already
 * committed stays, which docs/api.md §1 makes harmless (every call is safe to retry).
 */
export const REQUEST_DEADLINE_MS = 8000;

const DEADLINE_LOG_EVERY_MS = 10_000;

const tooSlow = () =>
  new ApiError(
    "internal_error",
    "The service could not finish in time (its database is slow or unreachable); retry with exponential backoff.",
  );

/**
 * The app's answer, or the deadline's when the app takes longer. The request runs in a scope that
 * holds everything it takes from the database, called off at the deadline or when the client goes
 * away, and kept past the answer only by a body that streams (an export) until that body ends.
 */
async function answerWithin(app: App, request: Request, received: Request, log: Log): Promise<Response> {
  const scope = new RequestScope(REQUEST_DEADLINE_MS);
  const clientGone = () => scope.abort("client_gone");
  received.signal.addEventListener("abort", clientGone, { once: true });
  scope.onSettled(() => received.signal.removeEventListener("abort", clientGone));
  const late = new Promise<Response>((resolve) =>
    scope.onAbort((reason) => {
      // A client that went away gets no answer; its request ends as its work, called off, fails.
      if (reason !== "deadline") return;
      log("request_deadline", {
        method: request.method,
        route: contextOf(request)?.route ?? "unmatched",
        afterMs: REQUEST_DEADLINE_MS,
      });
      resolve(errorResponse(tooSlow()));
    }),
  );
  try {
    return await Promise.race([withinScope(scope, () => app.handle(request)), late]);
  } finally {
    scope.end();
  }
}

export type Listening = {
  port: number;
  stop(): Promise<void>;
};

export type ServeOptions = {
  port: number;
  host: string;
  log: Log;
  metrics?: Metrics;
  readiness?: Readiness;
  /** Lets several request threads listen on one port; the kernel spreads connections over them. */
  reusePort?: boolean;
};

const probeAnswer = (status: number, body: Record<string, unknown>) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": JSON_MEDIA_TYPE } });

/**
 * Probes for orchestrators, outside /v1 and without a key: `/livez` says the process serves requests
 * at all (restart it if not); `/readyz` says it should get traffic: the index is built, the database
 * answers, and it is not draining for shutdown.
 */
function probes(readiness: Readiness) {
  return {
    "/livez": () => probeAnswer(200, { status: "ok" }),
    "/readyz": () => {
      const { ready, reasons, database } = readiness();
      return ready
        ? probeAnswer(200, { status: "ready", database })
        : probeAnswer(503, { status: "not_ready", reasons, database });
    },
  };
}

/** The number of media items a batch carried, for the access log; absent on every other route. */
function itemsOf(context: RequestContext | undefined): number | undefined {
  const media = (context?.body as { media?: unknown } | undefined)?.media;
  return Array.isArray(media) ? media.length : undefined;
}

/**
 * One access-log line and the request metrics; never a key, an email, coordinates or a body. The key's
 * id (as `keys list` shows it) says which of a partner's keys is still in use before one is revoked.
 */
function account(
  request: Request,
  response: Response,
  requestId: string,
  startedMs: number,
  options: ServeOptions,
) {
  const context = contextOf(request);
  const route = context?.route ?? "unmatched";
  const seconds = (performance.now() - startedMs) / 1000;
  options.metrics?.request(route, request.method, response.status, seconds);
  if (response.status === 429 && context?.budget) options.metrics?.rateLimited(context.budget);
  options.log(ACCESS_EVENT, {
    requestId,
    partner: context?.partner?.partnerId ?? null,
    keyId: context?.partner?.keyId ?? null,
    method: request.method,
    route,
    status: response.status,
    durationMs: Math.round(seconds * 10_000) / 10,
    items: itemsOf(context),
  });
}

/**
 * Serves the app. This wrapper is the last word on every response: it adds X-Request-Id and the
 * RateLimit headers, turns anything that still escaped the framework into the envelope, accounts for
 * the request in the access log and the metrics, and reads what a client that asked to close still
 * sends of a body the answer did not need, so that it gets the answer (body.ts).
 */
export function serve(app: App, options: ServeOptions): Listening {
  const readiness = options.readiness ?? (() => ({ ready: true, reasons: [] }));
  // A database that stops answering sends every request past its deadline: one line per burst.
  const deadlineLog = throttled(options.log, DEADLINE_LOG_EVERY_MS);
  const server = Bun.serve({
    port: options.port,
    hostname: options.host,
    maxRequestBodySize: RUNTIME_BODY_LIMIT,
    reusePort: options.reusePort ?? false,
    routes: probes(readiness),
    fetch: async (received) => {
      const startedMs = performance.now();
      const request = routable(received);
      const incoming = received.headers.get("x-request-id");
      const requestId = incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      let response: Response;
      try {
        response = await answerWithin(app, request, received, deadlineLog);
      } catch {
        response = errorResponse(internalError());
      }
      for (const [name, value] of Object.entries(contextOf(request)?.rateHeaders ?? {})) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
      response.headers.set("x-request-id", requestId);
      // Answers carry users' data (or say whether a user exists): no cache along the way may keep them.
      response.headers.set("cache-control", "no-store");
      account(request, response, requestId, startedMs, options);
      await dropUnreadBody(request, startedMs + BODY_TIMEOUT_MS);
      return response;
    },
  });
  return {
    port: server.port ?? options.port,
    stop: () => server.stop(),
  };
}
