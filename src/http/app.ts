import { Elysia, ValidationError } from "elysia";
import type { Config } from "../config.ts";
import type { RateLimits } from "../limits/index.ts";
import { type Log, throttled } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Matcher } from "../shards/matcher.ts";
import type { Store } from "../store/db.ts";
import { describeFailure, isConnectionFailure } from "../store/failures.ts";
import { createAuthenticator } from "./auth.ts";
import { erasureResource } from "./erasure.ts";
import { ApiError, errorResponse, internalError } from "./errors.ts";
import { EventFactsCache } from "./eventFacts.ts";
import { eventsResource } from "./events.ts";
import { registerFormats } from "./formats.ts";
import { contextOf, createGate } from "./gate.ts";
import { hidingResource } from "./hiding.ts";
import { mediaResource } from "./media.ts";
import { mediaDeletionResource } from "./mediaDeletion.ts";
import { mediaValidation } from "./mediaSchema.ts";
import { operationalResource } from "./operational.ts";
import { compileRoutes, routePolicies } from "./routes.ts";
import { statsResource } from "./stats.ts";
import { syncResource } from "./sync.ts";
import { userExportResource } from "./userExport.ts";
import { usersResource, userValidation } from "./users.ts";
import { invalidRequest, issuesOf, type ValidationTranslator } from "./validation.ts";
import { VenuePerformerCache } from "./venuePerformerCache.ts";

export type { Log } from "../observability/log.ts";

/** Everything the HTTP layer needs, built by main.ts (or a test) and handed in. */
export type AppDeps = {
  config: Config;
  store: Store;
  matcher: Matcher;
  limits: RateLimits;
  /** Secret that signs history cursors; the same on every instance sharing a database. */
  cursorSecret: string;
  log: Log;
  /** Where the counters go; absent, nothing is counted (tests that do not look at them). */
  metrics?: Metrics;
};

/** What the resources are built with: the app's dependencies and what the app keeps for them. */
export type ResourceDeps = AppDeps & {
  eventFacts: EventFactsCache;
  venuesAndPerformers: VenuePerformerCache;
};

/** Schema failures of a route, keyed `METHOD /v1/path`, when the route's codes are not invalid_request. */
const validationTranslators: Record<string, ValidationTranslator> = { ...userValidation, ...mediaValidation };

/**
 * Turns anything thrown while serving into the error envelope (docs/api.md §11). The framework's own failures
 * (parse, validation, unknown route) are mapped here too, so no plain-text or 422 answer escapes.
 */
function toApiError(error: unknown, route: string, method: string, logs: FailureLogs): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ValidationError) {
    const translate = validationTranslators[`${method} ${route}`] ?? invalidRequest;
    return translate(issuesOf(error), error.type);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "NOT_FOUND") return new ApiError("not_found", "No such path.");
  if (code === "PARSE") return new ApiError("invalid_request", "The request body is not valid JSON.");
  if (isConnectionFailure(error)) {
    logs.database("database_request_failed", { route, method, ...describeFailure(error) });
  } else {
    logs.defect("internal_error", { route, method, ...describeFailure(error) });
  }
  return internalError();
}

/**
 * Where failures are logged: a defect on every request it hits, the database's absence at most once
 * every ten seconds (the database watch logs when it goes and when it is back).
 */
type FailureLogs = { defect: Log; database: Log };

const DATABASE_FAILURE_LOG_EVERY_MS = 10_000;

/** The path a request asked for, for the log when the failure came before routing (the gate's key lookup). */
function pathOf(request: Request): string {
  try {
    return new URL(request.url).pathname;
  } catch {
    return "";
  }
}

export function createApp(deps: AppDeps) {
  registerFormats();
  // EVENT_CACHE_MB bounds both: half for whole events, half for the venues and performers they and
  // the stats are built from.
  const venuesAndPerformers = new VenuePerformerCache(deps.config.eventCacheMb * 2 ** 19);
  const resources: ResourceDeps = {
    ...deps,
    eventFacts: new EventFactsCache(deps.config.eventCacheMb * 2 ** 19, (store, ids) =>
      venuesAndPerformers.eventFacts(store, ids),
    ),
    venuesAndPerformers,
  };
  deps.metrics?.watchCache("event_facts", () => resources.eventFacts.stats());
  deps.metrics?.watchCache("venues_performers", () => venuesAndPerformers.stats());
  const failureLogs: FailureLogs = {
    defect: deps.log,
    database: throttled(deps.log, DATABASE_FAILURE_LOG_EVERY_MS),
  };
  const gate = createGate({
    routes: compileRoutes(routePolicies),
    authenticate: createAuthenticator(deps.store, deps.config.environment),
    limits: deps.limits,
  });
  // No normalization: bodies are validated as sent and handed over as sent. The default
  // ("exactMirror") reshapes a body to the schema before validating it, which turns a wrong JSON type
  // into an empty object or a coerced value instead of a 400 (docs/api.md §1); "typebox" validates first
  // but then copies the body to drop unknown members, which the handlers ignore anyway (openObject).
  return new Elysia({ prefix: "/v1", normalize: false })
    .onRequest(async ({ request }) => {
      try {
        await gate(request);
      } catch (error) {
        return errorResponse(toApiError(error, pathOf(request), request.method, failureLogs));
      }
      return undefined;
    })
    .onParse(({ request }) => {
      // The gate read the body already; a JSON `null` body must reach validation as null (a 400), not {}.
      const context = contextOf(request);
      return context === undefined ? {} : context.body;
    })
    .onError(({ error, route, request }) =>
      errorResponse(toApiError(error, route ?? "", request.method, failureLogs)),
    )
    .use(operationalResource(deps))
    .use(usersResource(deps))
    .use(syncResource(deps))
    .use(statsResource(resources))
    .use(hidingResource(deps))
    .use(mediaResource(resources))
    .use(mediaDeletionResource(deps))
    .use(erasureResource(deps))
    .use(userExportResource(deps))
    .use(eventsResource(resources));
}

export type App = ReturnType<typeof createApp>;
