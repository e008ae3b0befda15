/** Faults logged once, not once per failing request (docs/operations.md §10, Logs). */
import { describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseWatch } from "../src/observability/databaseWatch.ts";
import { createLogger, throttled } from "../src/observability/log.ts";

type Line = { event: string; fields: Record<string, unknown> };

function collector() {
  const lines: Line[] = [];
  return {
    lines,
    log: (event: string, fields: Record<string, unknown> = {}) => lines.push({ event, fields }),
  };
}

describe("database watch", () => {
  test("logs when the database goes and when it is back, once each, however many checks fail", async () => {
    const { lines, log } = collector();
    let answering = true;
    const watch = new DatabaseWatch(async () => answering, log);
    await watch.check();
    expect([watch.up(), lines]).toEqual([true, []]);
    answering = false;
    for (let i = 0; i < 5; i++) await watch.check();
    expect(watch.up()).toBe(false);
    answering = true;
    await watch.check();
    await watch.check();
    expect(watch.up()).toBe(true);
    expect(lines.map((line) => line.event)).toEqual(["database_unavailable", "database_recovered"]);
    expect(typeof lines[1]?.fields["downSeconds"]).toBe("number");
  });
});

describe("throttled log", () => {
  test("the first line at once, then none until the interval passed, which says how many were left out", async () => {
    const { lines, log } = collector();
    const quiet = throttled(log, 50);
    for (let i = 0; i < 10; i++) quiet("database_request_failed", { i });
    expect(lines).toEqual([{ event: "database_request_failed", fields: { i: 0 } }]);
    await Bun.sleep(60);
    quiet("database_request_failed", { i: 10 });
    expect(lines[1]).toEqual({ event: "database_request_failed", fields: { i: 10, alsoSinceLastLine: 9 } });
  });
});

describe("logger", () => {
  test("JSON lines with level, time and event; LOG_LEVEL=warn keeps faults and drops the access log", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "rollcall-log-")), "out.log");
    const fd = openSync(path, "w");
    const logger = createLogger("warn", fd);
    logger.log("request", { status: 200 });
    logger.log("internal_error", { route: "/v1/users" });
    logger.log("database_recovered", { downSeconds: 1 });
    await logger.flush();
    closeSync(fd);
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", event: "internal_error", route: "/v1/users" });
    expect(Number.isNaN(Date.parse(lines[0].time))).toBe(false);
  });
});
