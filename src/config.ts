import { availableParallelism } from "node:os";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { replicationProblems } from "./databaseUrls.ts";

/**
 * The one place that reads process.env. Every variable an operator can set is declared here with its
 * accepted values, parsed once, and handed to the rest of the program as a plain frozen object, so a
 * test can build any configuration without touching the environment.
 */

const Integer = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });
const OptionalLimit = Type.Union([Type.Null(), Integer(1, 1_000_000_000)]);

const ConfigSchema = Type.Object({
  databaseUrl: Type.Union([Type.Null(), Type.String({ pattern: "^postgres(ql)?://" })]),
  databaseReadUrl: Type.Union([Type.Null(), Type.String({ pattern: "^postgres(ql)?://" })]),
  databaseReadMaxLagSeconds: Integer(1, 3600),
  databasePoolSize: Integer(1, 1000),
  databaseReadPoolSize: Integer(1, 1000),
  exportsPerInstance: Integer(1, 256),
  exportDeadlineSeconds: Integer(8, 3600),
  dataDir: Type.String({ minLength: 1 }),
  port: Integer(0, 65535),
  host: Type.String({ minLength: 1 }),
  environment: Type.Union([Type.Literal("production"), Type.Literal("sandbox")]),
  shards: Integer(1, 4096),
  workers: Integer(0, 256),
  requestThreads: Integer(1, 256),
  match: Type.Object({
    radiusM: Integer(1, 5000),
    beforeMinutes: Integer(0, 10080),
    afterMinutes: Integer(0, 10080),
    defaultDurationMinutes: Integer(1, 43200),
  }),
  catalogPollSeconds: Integer(1, 3600),
  eventCacheMb: Integer(0, 65536),
  rateLimit: Type.Object({
    enabled: Type.Boolean(),
    windowSeconds: Integer(1, 86400),
    ingest: OptionalLimit,
    read: OptionalLimit,
    write: OptionalLimit,
    store: Type.Union([Type.Literal("memory"), Type.String({ pattern: "^rediss?://" })]),
  }),
  cursorSecret: Type.Union([Type.Null(), Type.String({ minLength: 32 })]),
  demo: Type.Boolean(),
  logLevel: Type.Union([
    Type.Literal("trace"),
    Type.Literal("debug"),
    Type.Literal("info"),
    Type.Literal("warn"),
    Type.Literal("error"),
    Type.Literal("fatal"),
    Type.Literal("silent"),
  ]),
  metricsPort: Type.Union([Type.Null(), Integer(1, 65535)]),
  metricsHost: Type.String({ minLength: 1 }),
  drainSeconds: Integer(0, 300),
});

export type Config = Static<typeof ConfigSchema>;
export type Environment = Config["environment"];

type Env = Record<string, string | undefined>;

/** DATABASE_READ_MAX_LAG_SECONDS's default, also a store's opened without it (tests). */
export const DEFAULT_READ_MAX_LAG_SECONDS = 5;

/** EXPORTS_PER_INSTANCE's default, also the export pool of a store opened without a size (tests). */
export const DEFAULT_EXPORTS_PER_INSTANCE = 4;

/** Raised with every offending variable named, so an operator fixes them all in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** What each variable accepts, in the words an operator reads in the error. */
const accepts: Record<string, string> = {
  DATABASE_URL: "a postgres:// or postgresql:// URL",
  DATABASE_READ_URL: "a postgres:// or postgresql:// URL of one or more hot standbys",
  DATABASE_READ_MAX_LAG_SECONDS:
    "an integer from 1 to 3600 (seconds a standby may lag and still serve reads)",
  DATABASE_POOL_SIZE: "an integer from 1 to 1000 (connections to PostgreSQL)",
  DATABASE_READ_POOL_SIZE: "an integer from 1 to 1000 (connections for history pages and stats)",
  EXPORTS_PER_INSTANCE:
    "an integer from 1 to 256 (user exports at once on this instance, each on a database connection of its own)",
  EXPORT_DEADLINE_SECONDS: "an integer from 8 to 3600 (seconds an export's streamed answer may take)",
  DATA_DIR: "a directory path",
  PORT: "an integer from 0 to 65535",
  HOST: "a host name or address",
  SERVICE_ENVIRONMENT: "production or sandbox",
  SHARDS: "an integer from 1 to 4096",
  WORKERS: "an integer from 0 to 256 (0 matches on the main thread)",
  REQUEST_THREADS:
    "an integer from 1 to 256 (threads serving HTTP on the one port; 1 on the embedded database, which one thread holds)",
  MATCH_RADIUS_M: "an integer from 1 to 5000 (metres)",
  MATCH_BEFORE_MINUTES: "an integer from 0 to 10080",
  MATCH_AFTER_MINUTES: "an integer from 0 to 10080",
  MATCH_DEFAULT_DURATION_MINUTES: "an integer from 1 to 43200",
  CATALOG_POLL_SECONDS: "an integer from 1 to 3600",
  EVENT_CACHE_MB: "an integer from 0 to 65536 (megabytes; 0 turns the cache off)",
  RATE_LIMIT_ENABLED: "true or false (or 1 or 0, any case)",
  RATE_LIMIT_WINDOW_SECONDS: "an integer from 1 to 86400",
  RATE_LIMIT_INGEST: "a positive integer, or empty for no limit",
  RATE_LIMIT_READ: "a positive integer, or empty for no limit",
  RATE_LIMIT_WRITE: "a positive integer, or empty for no limit",
  RATE_LIMIT_STORE: "memory, or a redis:// URL",
  CURSOR_SECRET: "a string of at least 32 characters",
  DEMO: "true or false (or 1 or 0, any case)",
  LOG_LEVEL: "trace, debug, info, warn, error, fatal or silent",
  METRICS_PORT: "a port from 1 to 65535 for the Prometheus metrics, or empty for none",
  METRICS_HOST: "a host name or address",
  DRAIN_SECONDS: "an integer from 0 to 300 (seconds /readyz answers 503 before shutdown stops listening)",
};

/** Every variable an operator can set, by name (deploy/rollcall.env.example shows each). */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(accepts));

/** Maps each config path back to the variable it came from, to name it in errors. */
const variableOf: Record<string, string> = {
  "/databaseUrl": "DATABASE_URL",
  "/databaseReadUrl": "DATABASE_READ_URL",
  "/databaseReadMaxLagSeconds": "DATABASE_READ_MAX_LAG_SECONDS",
  "/databasePoolSize": "DATABASE_POOL_SIZE",
  "/databaseReadPoolSize": "DATABASE_READ_POOL_SIZE",
  "/exportsPerInstance": "EXPORTS_PER_INSTANCE",
  "/exportDeadlineSeconds": "EXPORT_DEADLINE_SECONDS",
  "/dataDir": "DATA_DIR",
  "/port": "PORT",
  "/host": "HOST",
  "/environment": "SERVICE_ENVIRONMENT",
  "/shards": "SHARDS",
  "/workers": "WORKERS",
  "/requestThreads": "REQUEST_THREADS",
  "/match/radiusM": "MATCH_RADIUS_M",
  "/match/beforeMinutes": "MATCH_BEFORE_MINUTES",
  "/match/afterMinutes": "MATCH_AFTER_MINUTES",
  "/match/defaultDurationMinutes": "MATCH_DEFAULT_DURATION_MINUTES",
  "/catalogPollSeconds": "CATALOG_POLL_SECONDS",
  "/eventCacheMb": "EVENT_CACHE_MB",
  "/rateLimit/enabled": "RATE_LIMIT_ENABLED",
  "/rateLimit/windowSeconds": "RATE_LIMIT_WINDOW_SECONDS",
  "/rateLimit/ingest": "RATE_LIMIT_INGEST",
  "/rateLimit/read": "RATE_LIMIT_READ",
  "/rateLimit/write": "RATE_LIMIT_WRITE",
  "/rateLimit/store": "RATE_LIMIT_STORE",
  "/cursorSecret": "CURSOR_SECRET",
  "/demo": "DEMO",
  "/logLevel": "LOG_LEVEL",
  "/metricsPort": "METRICS_PORT",
  "/metricsHost": "METRICS_HOST",
  "/drainSeconds": "DRAIN_SECONDS",
};

/** Empty strings count as unset: `RATE_LIMIT_READ=` is how an operator says "no limit". */
function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** Numbers are parsed strictly (no "12abc", no "1e3") so a typo fails instead of half-working. */
function number(env: Env, name: string, fallback: number | null): unknown {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

function boolean(env: Env, name: string, fallback: boolean): unknown {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  return value;
}

/**
 * The default worker count. On two cores or fewer, matching inline: the cores are shared with
 * PostgreSQL and the HTTP handling, matching is a small part of a media batch's cost, and one batch at
 * a time is slower through the pool (see `bun run bench:match`); above that, one thread per spare core.
 */
function defaultWorkers(): number {
  const cores = availableParallelism();
  return cores <= 2 ? 0 : cores - 1;
}

/**
 * The default number of request threads: one per core, so every core serves requests. Each thread
 * runs the whole HTTP path (parsing, checks, the database driver, serializing), which is nearly all of
 * a batch's server CPU; matching is a few percent of it.
 */
function defaultRequestThreads(): number {
  return availableParallelism();
}

/**
 * The default number of connections for history pages and stats: one per core, at least two. These
 * reads keep PostgreSQL busy for as long as they hold a connection, so past about one per core more of
 * them at once only compete with the server for the CPU and widen the tail (docs/performance.md §4);
 * batches, which mostly wait on the commit's flush, keep the larger main pool.
 */
function defaultReadPoolSize(): number {
  return Math.max(2, availableParallelism());
}

export function parseConfig(env: Env): Config {
  const candidate = {
    databaseUrl: raw(env, "DATABASE_URL") ?? null,
    databaseReadUrl: raw(env, "DATABASE_READ_URL") ?? null,
    databaseReadMaxLagSeconds: number(env, "DATABASE_READ_MAX_LAG_SECONDS", DEFAULT_READ_MAX_LAG_SECONDS),
    databasePoolSize: number(env, "DATABASE_POOL_SIZE", 10),
    databaseReadPoolSize: number(env, "DATABASE_READ_POOL_SIZE", defaultReadPoolSize()),
    exportsPerInstance: number(env, "EXPORTS_PER_INSTANCE", DEFAULT_EXPORTS_PER_INSTANCE),
    exportDeadlineSeconds: number(env, "EXPORT_DEADLINE_SECONDS", 60),
    dataDir: raw(env, "DATA_DIR") ?? "./.data",
    port: number(env, "PORT", 3000),
    host: raw(env, "HOST") ?? "127.0.0.1",
    environment: raw(env, "SERVICE_ENVIRONMENT") ?? "sandbox",
    shards: number(env, "SHARDS", 16),
    workers: number(env, "WORKERS", defaultWorkers()),
    requestThreads: number(
      env,
      "REQUEST_THREADS",
      raw(env, "DATABASE_URL") === undefined ? 1 : defaultRequestThreads(),
    ),
    match: {
      radiusM: number(env, "MATCH_RADIUS_M", 500),
      beforeMinutes: number(env, "MATCH_BEFORE_MINUTES", 120),
      afterMinutes: number(env, "MATCH_AFTER_MINUTES", 60),
      defaultDurationMinutes: number(env, "MATCH_DEFAULT_DURATION_MINUTES", 300),
    },
    catalogPollSeconds: number(env, "CATALOG_POLL_SECONDS", 2),
    eventCacheMb: number(env, "EVENT_CACHE_MB", 256),
    rateLimit: {
      enabled: boolean(env, "RATE_LIMIT_ENABLED", false),
      windowSeconds: number(env, "RATE_LIMIT_WINDOW_SECONDS", 60),
      ingest: number(env, "RATE_LIMIT_INGEST", null),
      read: number(env, "RATE_LIMIT_READ", null),
      write: number(env, "RATE_LIMIT_WRITE", null),
      store: raw(env, "RATE_LIMIT_STORE") ?? "memory",
    },
    cursorSecret: raw(env, "CURSOR_SECRET") ?? null,
    demo: boolean(env, "DEMO", raw(env, "DATABASE_URL") === undefined),
    logLevel: raw(env, "LOG_LEVEL")?.toLowerCase() ?? "info",
    metricsPort: number(env, "METRICS_PORT", null),
    metricsHost: raw(env, "METRICS_HOST") ?? "127.0.0.1",
    drainSeconds: number(env, "DRAIN_SECONDS", 0),
  };
  const problems = new Set<string>();
  for (const error of Value.Errors(ConfigSchema, candidate)) {
    const name = variableOf[error.path] ?? error.path;
    problems.add(`${name}: got ${JSON.stringify(error.value)}, expected ${accepts[name] ?? error.message}`);
  }
  // PGlite is a database inside this process's one thread: no other thread can reach it.
  if (candidate.databaseUrl === null && candidate.requestThreads !== 1) {
    problems.add(
      `REQUEST_THREADS: got ${JSON.stringify(candidate.requestThreads)} without DATABASE_URL, expected 1 (the embedded database serves one thread)`,
    );
  }
  for (const problem of replicationProblems(candidate.databaseUrl, candidate.databaseReadUrl)) {
    problems.add(problem);
  }
  if (problems.size > 0) throw new ConfigError([...problems]);
  return Object.freeze(candidate as Config);
}

/** Reads the process environment; the only call site of process.env in the program. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}

/** Variables the CLI and load tools pass through to a child server process they start. */
export function processEnv(): Env {
  return { ...process.env };
}

/**
 * One variable of the process environment, read as the program reads its own (blank is unset), for
 * tests and tools with settings of their own (TEST_DATABASE_URL): this module stays the only reader.
 */
export function variable(name: string): string | undefined {
  return raw(process.env, name);
}

/** Whether stdout is an interactive terminal (progress bars are drawn only there). */
export function isInteractive(): boolean {
  return process.stdout.isTTY === true && raw(process.env, "CI") === undefined;
}
