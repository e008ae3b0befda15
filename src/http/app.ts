import { Elysia, ValidationError } from "elysia";
import { createCatalogFacts } from "../flows/catalogFacts/eventFacts.ts";
import { ExportSlots } from "../limits/exportSlots.ts";
import { buildInfo } from "../observability/build.ts";
import { type Log, throttled } from "../observability/log.ts";
import { describeFailure, isCalledOff, isConnectionFailure } from "../store/failures.ts";
import { apiRoutesPlugin, routePolicies, translatorOf } from "./apiRoutes.ts";
import { createAuthenticator } from "./auth.ts";
import { ApiError, errorResponse, internalError } from "./errors.ts";
import { registerFormats } from "./formats.ts";
import { contextOf, createGate } from "./gate.ts";
import { compileGateRouter } from "./gateRouter.ts";
import type { AppDeps, ResourceDeps } from "./route.ts";
import { issuesOf } from "./validation.ts";

export type { Log } from "../observability/log.ts";

export type { AppDeps, ResourceDeps } from "./route.ts";

/**
 * Turns anything thrown while serving into the error envelope (docs/api.md §11). The framework's own failures
 * (parse, validation, unknown route) are mapped here too, so no plain-text or 422 answer escapes.
 */
function toApiError(error: unknown, route: string, method: string, logs: FailureLogs): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ValidationError) {
    return translatorOf(method, route)(issuesOf(error), error.type);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "NOT_FOUND") return new ApiError("not_found", "No such path.");
  if (code === "PARSE") return new ApiError("invalid_request", "The request body is not valid JSON.");
  // The request already ended (its deadline, or its client gone) and was logged then: this answer goes nowhere.
  if (isCalledOff(error)) return internalError();
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

/** The route a request asked for, for the log (a pattern: never a user id), or "unmatched". */
function routeOf(request: Request): string {
  return contextOf(request)?.route ?? "unmatched";
}

export function createApp(deps: AppDeps) {
  registerFormats();
  // EVENT_CACHE_MB bounds the caches of catalog facts together.
  const resources: ResourceDeps = {
    ...deps,
    ...createCatalogFacts(deps.config.eventCacheMb * 2 ** 20),
    exportSlots: new ExportSlots(deps.config.exportsPerInstance),
    // Read here, as the thread starts, so that no request waits for the commit lookup.
    build: buildInfo(),
  };
  deps.metrics?.watchCache("event_facts", () => resources.eventFacts.stats());
  deps.metrics?.watchCache("venues_performers", () => resources.venuesAndPerformers.stats());
  const failureLogs: FailureLogs = {
    defect: deps.log,
    database: throttled(deps.log, DATABASE_FAILURE_LOG_EVERY_MS),
  };
  const gate = createGate({
    router: compileGateRouter(routePolicies),
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
        return errorResponse(toApiError(error, routeOf(request), request.method, failureLogs));
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
    .use(apiRoutesPlugin(resources));
}

export type App = ReturnType<typeof createApp>;
