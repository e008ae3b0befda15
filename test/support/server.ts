import { sql } from "drizzle-orm";
import { type Config, parseConfig, variable } from "../../src/config.ts";
import { createApp } from "../../src/http/app.ts";
import { type Listening, serve } from "../../src/http/server.ts";
import { startRequestThreads } from "../../src/http/threads.ts";
import {
  type Clock,
  createRateLimits,
  type LimitsLog,
  type RateLimits,
  sharedMemoryLimiter,
} from "../../src/limits/index.ts";
import type { Readiness } from "../../src/observability/instance.ts";
import type { Metrics } from "../../src/observability/metrics.ts";
import { createMatchingEngine, type MatchingEngine } from "../../src/shards/engine.ts";
import type { Matcher } from "../../src/shards/matcher.ts";
import { storeCatalogSource } from "../../src/shards/source.ts";
import type { Store } from "../../src/store/db.ts";
import { createPartner, issueKey } from "../../src/store/keys.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { testEngineEnv } from "./environment.ts";

export type TestServer = {
  baseUrl: string;
  database: TestDatabase;
  store: Store;
  /** The secret the server signs history cursors with, so a test can forge an expired one. */
  cursorSecret: string;
  /** Rebuilds the matcher from the catalog tables (after a test inserts catalog rows). */
  reloadCatalog(): Promise<void>;
  /** Creates a partner and returns one key per environment. */
  partner(id: string): Promise<{ sandbox: string; production: string }>;
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
};

export type CallOptions = {
  key?: string | null;
  body?: unknown;
  /** A raw body sent as is (for malformed-input tests); wins over `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
};

export type CallResult = {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and assert on their shape.
  body: any;
};

/**
 * Test files insert catalog rows directly; bumping the version is what an import does, and is what makes
 * the engine's refresh build a new index generation from them.
 */
async function bumpCatalogVersion(store: Store): Promise<void> {
  await store.rows(
    sql`insert into catalog_state (id, version) values (1, 1)
        on conflict (id) do update set version = catalog_state.version + 1, updated_at = now()`,
  );
}

const TEST_CURSOR_SECRET = "test-cursor-secret-of-at-least-32-chars";

export type TestServerOptions = {
  /**
   * Serve another server's database (a second instance behind the same load balancer). The database
   * stays owned by the server that created it: this one's close() leaves it alone.
   */
  database?: TestDatabase;
  /** Drives the rate-limit windows (and the overrides' cache expiry) instead of the wall clock. */
  clock?: Clock;
  /** Key prefix when RATE_LIMIT_STORE is a Redis URL: servers of one test share it, test runs do not. */
  redisPrefix?: string;
  /** Receives the server's log events (default: dropped). */
  log?: LimitsLog;
  /** Wraps the catalog matcher the API calls, e.g. to make it fail or answer an event that does not exist. */
  wrapMatcher?: (inner: Matcher) => Matcher;
  /** Counts requests, items and cache lookups into these metrics (default: none kept). */
  metrics?: Metrics;
  /** Answers /readyz (default: always ready). */
  readiness?: Readiness;
};

/**
 * Starts the real HTTP server in-process on a fresh PostgreSQL database, on a random port.
 * `env` is parsed like the process environment, so a test can set any variable (RATE_LIMIT_*, MATCH_*).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase());
  const config = parseConfig({
    SERVICE_ENVIRONMENT: "sandbox",
    ...testEngineEnv(),
    ...env,
    DATABASE_URL: database.url,
    PORT: "0",
  });
  // The server's own sharded engine, with SHARDS and WORKERS as the test run sets them (API tests
  // run under several settings in CI: the answers must not depend on them).
  const threaded = config.requestThreads > 1 && Object.keys(options).every((name) => name === "database");
  const engine = await createMatchingEngine(storeCatalogSource(database.store), {
    settings: config.match,
    shards: config.shards,
    workers: threaded ? 0 : config.workers,
  });
  const listening = threaded
    ? await serveOnThreads(config, engine)
    : serveInProcess(config, database, engine, options);
  const baseUrl = `http://127.0.0.1:${listening.port}`;
  return {
    baseUrl,
    database,
    store: database.store,
    cursorSecret: TEST_CURSOR_SECRET,
    async reloadCatalog() {
      await bumpCatalogVersion(database.store);
      await engine.refresh();
    },
    async partner(id) {
      await createPartner(database.store, { id, name: id });
      const sandbox = await issueKey(database.store, { partnerId: id, environment: "sandbox", label: null });
      const production = await issueKey(database.store, {
        partnerId: id,
        environment: "production",
        label: null,
      });
      return { sandbox: sandbox.key, production: production.key };
    },
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers["x-partner-api-key"] = options.key;
      let body: string | Uint8Array | undefined = options.rawBody;
      if (body === undefined && options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const response = await fetch(baseUrl + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text === "" ? null : JSON.parse(text);
      } catch {
        // Not JSON: the raw text is returned so an assertion can show what came back.
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
    async close() {
      await listening.stop();
      await engine.close();
      if (options.database === undefined) await database.drop();
    },
  };
}

/** The app on this thread, with whatever the test hooks in (a wrapped matcher, a log, a clock, metrics). */
function serveInProcess(
  config: Config,
  database: TestDatabase,
  engine: MatchingEngine,
  options: TestServerOptions,
): Listening {
  const delegating: Matcher = {
    match: (q) => engine.match(q),
    version: () => engine.version(),
    close: async () => {},
  };
  const log = options.log ?? (() => {});
  const limits: RateLimits = createRateLimits(config, {
    store: database.store,
    log,
    clock: options.clock,
    redisPrefix: options.redisPrefix,
  });
  const app = createApp({
    config,
    store: database.store,
    matcher: options.wrapMatcher ? options.wrapMatcher(delegating) : delegating,
    limits,
    cursorSecret: TEST_CURSOR_SECRET,
    log,
    metrics: options.metrics,
  });
  const listening = serve(app, {
    port: 0,
    host: "127.0.0.1",
    log,
    metrics: options.metrics,
    readiness: options.readiness,
  });
  return {
    port: listening.port,
    stop: async () => {
      await listening.stop();
      await limits.close();
    },
  };
}

/**
 * The app on REQUEST_THREADS request threads over the engine's shared index, as the server runs it
 * (a test that hooks anything in stays in-process). Their access log is left out unless LOG_LEVEL asks.
 */
async function serveOnThreads(config: Config, engine: MatchingEngine): Promise<Listening> {
  const memoryLimiter = sharedMemoryLimiter(config);
  const threads = await startRequestThreads({
    config: { ...config, logLevel: variable("LOG_LEVEL") === undefined ? "warn" : config.logLevel },
    cursorSecret: TEST_CURSOR_SECRET,
    engine,
    memoryLimiter,
    log: () => {},
  });
  return {
    port: threads.port,
    stop: async () => {
      await threads.stop();
      await memoryLimiter?.close();
    },
  };
}
