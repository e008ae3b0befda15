import type { Static, TSchema } from "@sinclair/typebox";
import type { Config } from "../config.ts";
import type { CatalogFacts } from "../flows/catalogFacts/eventFacts.ts";
import type { ExportSlots } from "../limits/exportSlots.ts";
import type { RateLimits } from "../limits/index.ts";
import type { BuildInfo } from "../observability/build.ts";
import type { Log } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Matcher } from "../shards/matcher.ts";
import type { Store } from "../store/db.ts";
import type { ErrorCode } from "./errors.ts";
import type { RoutePolicy } from "./gateRouter.ts";
import type { ValidationTranslator } from "./validation.ts";

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

/** What the handlers are built with: the app's dependencies and what the app keeps for the flows. */
export type ResourceDeps = AppDeps & CatalogFacts & { exportSlots: ExportSlots; build: BuildInfo };

export type Method = "GET" | "POST" | "DELETE";

/** What the framework validates before a handler runs. */
type Schemas = { params?: TSchema; query?: TSchema; body?: TSchema };

type StaticOr<S, Otherwise> = S extends TSchema ? Static<S> : Otherwise;

/** What a handler reads, typed by its route's schemas (which the framework enforced). */
export type HandlerInput<S extends Schemas> = {
  request: Request;
  params: StaticOr<S["params"], Record<string, never>>;
  query: StaticOr<S["query"], Record<string, string | undefined>>;
  body: StaticOr<S["body"], unknown>;
  /** Answers with a status other than the default 200 (the body is still checked against its schema). */
  status: (code: 200 | 201, body: unknown) => unknown;
};

/** Framework options besides the schemas, handed over as written. */
type Options = {
  /** Names the body's parser, which is what makes the OpenAPI document list the body as JSON. */
  parse?: "json";
  /** Checks that run before the schema's, in the order docs/api.md §2 wants (see mediaSchema.ts). */
  transform?: (context: { body: unknown; request: Request }) => void;
  /** The successful answers; the errors are documented from the policy and `errors` (src/http/openapi). */
  response: Record<number, TSchema>;
  detail: {
    /** The operation's name in the OpenAPI document, which generated clients name their methods after. */
    operationId: string;
    summary: string;
    description?: string;
    tags?: string[];
    security?: unknown[];
    /** What a successful status means, where "Success" says too little. */
    answers?: Record<number, string>;
  };
};

/**
 * One route, written once: what the gate enforces (`policy`), what the framework validates and
 * documents (`schema`), how schema failures read (`translate`, else 400 invalid_request), and the
 * handler. `handle` builds the handler from the app's dependencies; the framework reads which request
 * members the handler destructures from its source, so the handler must name them itself rather than
 * pass the whole context on.
 */
export type RouteDefinition = {
  method: Method;
  /** Below /v1, in the framework's `:param` syntax. */
  path: string;
  policy: RoutePolicy;
  translate?: ValidationTranslator;
  /** Error codes of the route's own rules, besides those the gate answers from `policy` (docs/api.md §2). */
  errors?: readonly ErrorCode[];
  schema: Schemas & Options;
  handle: (deps: ResourceDeps) => (input: never) => unknown;
};

/** A route whose handler is typed by its own schemas. */
export function route<const S extends Schemas>(definition: {
  method: Method;
  path: string;
  policy: RoutePolicy;
  translate?: ValidationTranslator;
  errors?: readonly ErrorCode[];
  schema: S & Options;
  handle: (deps: ResourceDeps) => (input: HandlerInput<S>) => unknown;
}): RouteDefinition {
  return definition;
}
