import { Elysia } from "elysia";
import { erasureRoute } from "./erasure.ts";
import { historyRoute } from "./events.ts";
import type { RoutePolicy } from "./gateRouter.ts";
import { hideRoute, unhideRoute } from "./hiding.ts";
import { mediaBatchRoute } from "./media.ts";
import { mediaDeletionRoute } from "./mediaDeletion.ts";
import { openapiRoute } from "./openapi/document.ts";
import { healthRoute, pingRoute } from "./operational.ts";
import type { ResourceDeps, RouteDefinition } from "./route.ts";
import { statsRoute } from "./stats.ts";
import { syncCompleteRoute } from "./sync.ts";
import { userExportRoute } from "./userExport.ts";
import { createUserRoute } from "./users.ts";
import { invalidRequest, type ValidationTranslator } from "./validation.ts";

/** Every path of the API starts here. */
const API_PREFIX = "/v1";

/**
 * Every route of the API, each written once (src/http/route.ts): the gate's policies, the framework's
 * registration, the schema failures' translation and the OpenAPI document all derive from this list.
 * Its order is the order of the document's paths.
 */
export const apiRoutes: readonly RouteDefinition[] = [
  pingRoute,
  healthRoute,
  createUserRoute,
  syncCompleteRoute,
  statsRoute,
  hideRoute,
  unhideRoute,
  mediaBatchRoute,
  mediaDeletionRoute,
  erasureRoute,
  userExportRoute,
  historyRoute,
  openapiRoute(() => apiRoutes),
];

const keyOf = (method: string, path: string) => `${method} ${API_PREFIX}${path}`;

/**
 * What the gate enforces, keyed `METHOD /v1/path`. The gate answers 404/405 from this table, so a
 * route the framework serves but this table lacks is a bug the tests catch (test/api-frame.test.ts).
 */
export const routePolicies: Record<string, RoutePolicy> = Object.fromEntries(
  apiRoutes.map((route) => [keyOf(route.method, route.path), route.policy]),
);

const translators = new Map(
  apiRoutes.flatMap((route) =>
    route.translate === undefined ? [] : [[keyOf(route.method, route.path), route.translate] as const],
  ),
);

/** How a route's schema failures read; `pattern` is the framework's full route (`/v1/users/:user_id`). */
export function translatorOf(method: string, pattern: string): ValidationTranslator {
  return translators.get(`${method} ${pattern}`) ?? invalidRequest;
}

/**
 * The routes as one plugin of the framework, each handler built from `deps` and registered with its
 * schemas as written. The casts stand where a list of differently typed routes meets the framework's
 * per-call inference; `route` already typed each handler by its own schemas.
 */
export function apiRoutesPlugin(deps: ResourceDeps) {
  const plugin = new Elysia();
  for (const { method, path, schema, handle } of apiRoutes) {
    plugin.route(method, path, handle(deps) as never, schema as never);
  }
  return plugin;
}
