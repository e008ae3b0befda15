import { parseArgs } from "node:util";
import { parseConfig } from "../src/config.ts";

export const SCENARIOS = ["ingest", "history", "stats", "mixed", "sweep", "restart"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export type LoadOptions = {
  scenario: Scenario;
  durationSeconds: number;
  /** Unmeasured seconds before each run (JIT, connection pools, caches). */
  warmupSeconds: number;
  /** One run per entry, for the throughput-and-p99-against-connections chart. */
  connections: number[];
  users: number;
  /** A running server to drive (`http://127.0.0.1:PORT`), or null to start one. */
  url: string | null;
  key: string | null;
  /** The database of a running server (read for the catalog, written by --kept-items). */
  databaseUrl: string | null;
  events: number;
  seed: number;
  keptItems: number;
  batches: number;
  batchSize: { min: number; max: number };
  shards: number[];
  workers: number[];
  baseline: boolean;
  keepDb: boolean;
  /** CPU-profile the self-started server (written under /tmp/rollcall-load/profiles when it stops). */
  profile: boolean;
  serverEnv: Record<string, string>;
  /** Non-2xx statuses a run provokes on purpose: 429 when the server's rate limits are switched on. */
  expectedStatuses: string[];
  /** restart: the second of the measured run at which PostgreSQL is restarted; null for the others. */
  restartAtSeconds: number | null;
};

export class UsageError extends Error {}

export const USAGE = `usage: bun run load -- --scenario ${SCENARIOS.join("|")} [options]
  --help, -h              this text
  --duration S            seconds per measured run (default 10)
  --restart-at S          restart: the second of the run at which PostgreSQL restarts (default a third in)
  --warmup S              unmeasured seconds before each run (default 3)
  --connections C[,C..]   concurrent connections, one run each (default 32)
  --users U               users sending media (ingest, mixed, sweep; default 100)
  --url URL --key KEY     drive a running server on 127.0.0.1 instead of starting one
  --database-url URL      its database (catalog sample, --kept-items); default DATABASE_URL
  --events N              catalog size of a self-started server (default 10000)
  --seed S                seed of catalog and traffic (default 1)
  --kept-items N          pre-load N kept media items in all with COPY, about 250 a user (default 10000
                          for history, stats, mixed; skipped when the partner has kept users already)
  --batches B             media batches pre-generated and rotated (default 3000)
  --batch-size N|MIN-MAX  items per batch (default 50-200; restart: 200)
  --shards N[,N..]        SHARDS of the self-started server (sweep: the grid; default: the server's / 1,4,16,64)
  --workers N[,N..]       WORKERS of the self-started server (sweep: the grid; default: the server's / 0,1,2)
  --no-baseline           ingest: skip the bare Elysia baseline
  --keep-db               keep the database (named after events, seed, kept items) and reuse it next time
  --server-env K=V        extra environment of the self-started server (repeatable)
  --profile               CPU-profile the self-started server (markdown under /tmp/rollcall-load/profiles)

restart runs rollcall on a PostgreSQL cluster of its own (initdb, pg_ctl; as the postgres OS user when
run as root), ingest on half the connections and history and stats on a quarter each, and restarts
that cluster (pg_ctl restart -m fast) at --restart-at: per-second answers, 5xx and p99, and the time
until every route answers 200 again.`;

/** A whole number from `min` to `max` given as `--name`, or a usage error naming the range. */
export function integer(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${text}`);
  }
  return Number(text);
}

function integers(name: string, text: string, min: number, max: number): number[] {
  return text.split(",").map((part) => integer(name, part.trim(), min, max));
}

/** Only the local machine is ever loaded: a typo must not aim a load test at someone else's host. */
function localUrl(text: string): string {
  const url = new URL(text);
  if (url.hostname !== "127.0.0.1")
    throw new UsageError(`--url must point at 127.0.0.1, got ${url.hostname}`);
  return url.origin;
}

type ParseConfig = Parameters<typeof parseArgs>[0];

/** parseArgs with strict checking, its complaints turned into usage errors. */
export function parseOrExplain<T extends ParseConfig>(config: T) {
  try {
    return parseArgs({ ...config, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The options of a run, or null when `--help` asked for the usage text. */
export function parseLoadArgs(argv: string[], defaultDatabaseUrl: string | null): LoadOptions | null {
  const { values } = parseOrExplain({
    args: argv,
    options: {
      scenario: { type: "string" },
      duration: { type: "string", default: "10" },
      "restart-at": { type: "string" },
      warmup: { type: "string", default: "3" },
      connections: { type: "string", default: "32" },
      users: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
      "database-url": { type: "string" },
      events: { type: "string", default: "10000" },
      seed: { type: "string", default: "1" },
      "kept-items": { type: "string" },
      batches: { type: "string", default: "3000" },
      "batch-size": { type: "string" },
      shards: { type: "string" },
      workers: { type: "string" },
      "no-baseline": { type: "boolean", default: false },
      "keep-db": { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      "server-env": { type: "string", multiple: true, default: [] },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return null;
  const scenario = SCENARIOS.find((s) => s === values.scenario);
  if (!scenario) throw new UsageError(`--scenario must be one of ${SCENARIOS.join(", ")}`);
  if ((values.url === undefined) !== (values.key === undefined))
    throw new UsageError("--url and --key go together");
  const url = values.url === undefined ? null : localUrl(values.url);
  if (url !== null && (scenario === "sweep" || scenario === "restart"))
    throw new UsageError(`${scenario} restarts what it drives: it needs a self-started server`);
  const restart = scenario === "restart";
  const batchSize = values["batch-size"] ?? (restart ? "200" : "50-200");
  const size = /^(\d+)(?:-(\d+))?$/.exec(batchSize);
  const min = integer("batch-size", size?.[1] ?? "", 1, 200);
  const max = integer("batch-size", size?.[2] ?? size?.[1] ?? "", 1, 200);
  if (max < min) throw new UsageError(`--batch-size MIN-MAX needs MIN <= MAX, got ${batchSize}`);
  const serverDefaults = parseConfig({});
  const reads = scenario === "history" || scenario === "stats" || scenario === "mixed" || restart;
  const sweep = scenario === "sweep";
  if ((scenario === "history" || scenario === "stats") && values.users !== undefined) {
    throw new UsageError(
      `${scenario} reads the kept users, whose number follows from --kept-items: drop --users`,
    );
  }
  if ((sweep || restart) && values.connections.includes(",")) {
    throw new UsageError(`${scenario} runs at one connection count: pass one --connections value`);
  }
  const durationSeconds = integer("duration", values.duration, 1, 900);
  const restartAtSeconds = restart ? restartSecond(values["restart-at"], durationSeconds) : null;
  if (!restart && values["restart-at"] !== undefined)
    throw new UsageError("--restart-at belongs to the restart scenario");
  if (restart && values["keep-db"])
    throw new UsageError("restart builds its database in a cluster that is removed afterwards: no --keep-db");
  if (!sweep && (values.shards?.includes(",") || values.workers?.includes(","))) {
    throw new UsageError("lists of --shards and --workers are sweep's grid; other scenarios take one value");
  }
  if (url !== null && (values.shards !== undefined || values.workers !== undefined)) {
    throw new UsageError("--shards and --workers set a self-started server: not with --url");
  }
  const serverEnv: Record<string, string> = {};
  for (const pair of values["server-env"]) {
    const [name, ...rest] = pair.split("=");
    if (!name || rest.length === 0) throw new UsageError(`--server-env takes NAME=VALUE, got ${pair}`);
    serverEnv[name] = rest.join("=");
  }
  const rateLimited = Object.entries(serverEnv).some(
    ([name, value]) => name === "RATE_LIMIT_ENABLED" && value === "true",
  );
  const databaseUrl = values["database-url"] ?? (url === null ? null : defaultDatabaseUrl);
  if (url !== null && databaseUrl === null) {
    throw new UsageError("a running server's catalog is read from its database: pass --database-url");
  }
  return {
    scenario,
    durationSeconds,
    warmupSeconds: integer("warmup", values.warmup, 0, 60),
    connections: integers("connections", values.connections, restart ? 4 : 1, 1024),
    users: integer("users", values.users ?? "100", 1, 100_000),
    url,
    key: values.key ?? null,
    databaseUrl,
    events: integer("events", values.events, 1, 10_000_000),
    seed: integer("seed", values.seed, 0, 2 ** 31 - 1),
    keptItems: integer("kept-items", values["kept-items"] ?? (reads ? "10000" : "0"), 0, 100_000_000),
    batches: integer("batches", values.batches, 1, 100_000),
    batchSize: { min, max },
    shards: integers(
      "shards",
      values.shards ?? (sweep ? "1,4,16,64" : String(serverDefaults.shards)),
      1,
      4096,
    ),
    workers: integers(
      "workers",
      values.workers ?? (sweep ? "0,1,2" : String(serverDefaults.workers)),
      0,
      256,
    ),
    baseline: !values["no-baseline"],
    keepDb: values["keep-db"],
    profile: values.profile,
    serverEnv,
    expectedStatuses: rateLimited ? ["429"] : [],
    restartAtSeconds,
  };
}

/** The restart's second: inside the run, with at least a second of traffic on either side of it. */
function restartSecond(text: string | undefined, durationSeconds: number): number {
  if (durationSeconds < 3) throw new UsageError("restart needs --duration 3 or more");
  if (text === undefined) return Math.max(1, Math.floor(durationSeconds / 3));
  return integer("restart-at", text, 1, durationSeconds - 2);
}
