import { describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { ConfigError, parseConfig } from "../src/config.ts";

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("the configuration was accepted");
}

describe("parseConfig", () => {
  test("defaults: embedded database, sandbox, port 3000 on localhost, demo on", () => {
    const config = parseConfig({});
    expect(config.databaseUrl).toBeNull();
    expect(config.databasePoolSize).toBe(10);
    expect(config.databaseReadPoolSize).toBeGreaterThanOrEqual(2);
    expect(config.dataDir).toBe("./.data");
    expect(config.port).toBe(3000);
    expect(config.host).toBe("127.0.0.1");
    expect(config.environment).toBe("sandbox");
    expect(config.match).toEqual({
      radiusM: 500,
      beforeMinutes: 120,
      afterMinutes: 60,
      defaultDurationMinutes: 300,
    });
    expect(config.rateLimit).toMatchObject({
      enabled: false,
      windowSeconds: 60,
      ingest: null,
      read: null,
      write: null,
    });
    expect(config.demo).toBe(true);
    expect(config.eventCacheMb).toBe(256);
    // An import reaches matching within a poll plus the index build: 2 + about 5 s for 2M events (docs/operations.md §3).
    expect(config.catalogPollSeconds).toBe(2);
  });

  test("a database URL turns the demo off unless asked for", () => {
    const url = "postgres://postgres@127.0.0.1:5432/rollcall";
    expect(parseConfig({ DATABASE_URL: url }).demo).toBe(false);
    expect(parseConfig({ DATABASE_URL: url, DEMO: "true" }).demo).toBe(true);
  });

  test("empty rate-limit variables mean no limit", () => {
    expect(parseConfig({ RATE_LIMIT_READ: "", RATE_LIMIT_WRITE: "25" }).rateLimit).toMatchObject({
      read: null,
      write: 25,
    });
  });

  test.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "12abc"],
    ["DATABASE_URL", "mysql://localhost/rollcall"],
    ["DATABASE_POOL_SIZE", "0"],
    ["DATABASE_READ_POOL_SIZE", "many"],
    ["SERVICE_ENVIRONMENT", "staging"],
    ["SHARDS", "0"],
    ["WORKERS", "-1"],
    ["MATCH_RADIUS_M", "1e3"],
    ["MATCH_BEFORE_MINUTES", "soon"],
    ["RATE_LIMIT_ENABLED", "yes"],
    ["RATE_LIMIT_INGEST", "0"],
    ["RATE_LIMIT_STORE", "memcached://x"],
    ["CURSOR_SECRET", "short"],
    ["DEMO", "maybe"],
  ])("%s=%p is refused with a message naming the variable", (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith(`${name}: got`);
    expect(problems[0]).toContain(JSON.stringify(value).slice(1, -1));
  });

  test("observability: info logs, no metrics listener, no drain unless asked; bad values named", () => {
    expect(parseConfig({})).toMatchObject({
      logLevel: "info",
      metricsPort: null,
      metricsHost: "127.0.0.1",
      drainSeconds: 0,
    });
    expect(parseConfig({ LOG_LEVEL: "WARN", METRICS_PORT: "9100", DRAIN_SECONDS: "5" })).toMatchObject({
      logLevel: "warn",
      metricsPort: 9100,
      drainSeconds: 5,
    });
    const problems = problemsOf({ LOG_LEVEL: "verbose", METRICS_PORT: "0", DRAIN_SECONDS: "301" });
    expect(problems.map((problem) => problem.split(":")[0])).toEqual([
      "LOG_LEVEL",
      "METRICS_PORT",
      "DRAIN_SECONDS",
    ]);
  });

  test("request threads: one per core on PostgreSQL, one on the embedded database, which allows no more", () => {
    expect(parseConfig({}).requestThreads).toBe(1);
    expect(parseConfig({ DATABASE_URL: "postgres://db/x" }).requestThreads).toBe(availableParallelism());
    expect(parseConfig({ DATABASE_URL: "postgres://db/x", REQUEST_THREADS: "3" }).requestThreads).toBe(3);
    expect(problemsOf({ REQUEST_THREADS: "2" }).map((problem) => problem.split(":")[0])).toEqual([
      "REQUEST_THREADS",
    ]);
    expect(problemsOf({ DATABASE_URL: "postgres://db/x", REQUEST_THREADS: "0" })[0]).toStartWith(
      "REQUEST_THREADS",
    );
  });

  test("several hosts in DATABASE_URL need target_session_attrs=read-write; standbys need a primary", () => {
    const hosts = "postgres://u@db1:5432,db2:5432/rollcall";
    expect(parseConfig({ DATABASE_URL: `${hosts}?target_session_attrs=read-write` }).databaseUrl).toBe(
      `${hosts}?target_session_attrs=read-write`,
    );
    expect(
      parseConfig({ DATABASE_URL: `${hosts}?sslmode=require&target_session_attrs=primary` }),
    ).toBeTruthy();
    for (const url of [hosts, `${hosts}?target_session_attrs=any`, `${hosts}?target_session_attrs=standby`]) {
      expect(problemsOf({ DATABASE_URL: url })[0]).toStartWith(
        "DATABASE_URL: names several hosts without target_session_attrs=read-write",
      );
    }
    // One host, and a comma in the password, are not several hosts.
    expect(parseConfig({ DATABASE_URL: "postgres://u:a,b@db:5432/rollcall" }).databaseUrl).toBeTruthy();
    const standbys = "postgres://u@s1:5432,s2:5432/rollcall";
    const read = parseConfig({ DATABASE_URL: "postgres://u@db/rollcall", DATABASE_READ_URL: standbys });
    expect([read.databaseReadUrl, read.databaseReadMaxLagSeconds]).toEqual([standbys, 5]);
    expect(problemsOf({ DATABASE_READ_URL: standbys })[0]).toStartWith(
      "DATABASE_READ_URL: set without DATABASE_URL",
    );
    expect(
      problemsOf({ DATABASE_URL: "postgres://u@db/rollcall", DATABASE_READ_URL: "mysql://s1/rollcall" })[0],
    ).toStartWith("DATABASE_READ_URL");
    expect(
      problemsOf({ DATABASE_URL: "postgres://u@db/rollcall", DATABASE_READ_MAX_LAG_SECONDS: "0" })[0],
    ).toStartWith("DATABASE_READ_MAX_LAG_SECONDS");
  });

  test("every bad variable is named at once", () => {
    const error = (() => {
      try {
        parseConfig({ PORT: "abc", SERVICE_ENVIRONMENT: "staging", SHARDS: "x", EVENT_CACHE_MB: "-1" });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    const message = error instanceof Error ? error.message : "";
    for (const name of ["PORT", "SERVICE_ENVIRONMENT", "SHARDS", "EVENT_CACHE_MB"])
      expect(message).toContain(name);
    expect(message).toContain("an integer from 0 to 65535");
  });
});
