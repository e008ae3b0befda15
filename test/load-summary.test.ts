import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type autocannon from "autocannon";
import { type LoadOptions, parseLoadArgs, UsageError } from "../load/args.ts";
import { ResponseRecorder } from "../load/drive/recorder.ts";
import { historyWorkload } from "../load/drive/workloads.ts";
import { connectionsChart, sweepChart } from "../load/report/charts.ts";
import { type CpuSample, cpuBetween, parseSchedstat } from "../load/report/cpu.ts";
import { summarize, tableRows } from "../load/report/summary.ts";
import { problemsOf, type Report, writeReport } from "../load/report/write.ts";

/** What autocannon hands back after a 2-second run; only the fields the summary reads matter. */
function fakeAutocannonResult(): autocannon.Result {
  return {
    duration: 2,
    errors: 1,
    timeouts: 1,
    statusCodeStats: { 200: { count: 7 } },
  } as unknown as autocannon.Result;
}

function recordedRun(): ResponseRecorder {
  const recorder = new ResponseRecorder();
  for (let i = 1; i <= 6; i++) recorder.record("media", 200, i * 10, 100, 3);
  recorder.record("media", 429, 1, 100, 0);
  recorder.record("media", 500, 2, 100, 0);
  recorder.record("stats", 200, 4, 0, 0);
  return recorder;
}

const directory = mkdtempSync(join(tmpdir(), "load-summary-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("load runner summary", () => {
  const summary = summarize(fakeAutocannonResult(), recordedRun(), {
    label: "ingest c=2",
    target: "rollcall",
    connections: 2,
    server: { shards: 4, workers: 1 },
    cpu: {
      generator: 0.4,
      server: 1.1,
      serverThread: { running: 70, waiting: 27 },
      postgres: 0.3,
      rest: 0.15,
      idle: 0.05,
    },
  });

  test("rates count only answered requests, items and matches only from 2xx batches", () => {
    expect(summary.requests).toBe(9);
    expect(summary.requestsPerSecond).toBe(4.5);
    expect(summary.batchesPerSecond).toBe(3);
    expect(summary.itemsPerSecond).toBe(300);
    expect(summary.matchedPerSecond).toBe(9);
    expect(summary.statuses).toEqual({ "200": 7, "429": 1, "500": 1 });
    expect(summary.non2xx).toEqual({ "429": 1, "500": 1 });
    expect(summary.errors).toBe(1);
    expect(summary.byKind.media?.requests).toBe(8);
    expect(summary.byKind.stats?.statuses).toEqual({ "200": 1 });
  });

  test("percentiles come from the recorded latencies, every status and kind included", () => {
    // 1, 2, 4, 10, 20, 30, 40, 50, 60 ms: the median is the fifth.
    expect(summary.latency.p50).toBeCloseTo(20, 0);
    expect(summary.latency.p99).toBeCloseTo(60, 0);
    expect(summary.latency.max).toBeCloseTo(60, 0);
    expect(summary.byKind.media?.latency.p95).toBeCloseTo(60, 0);
  });

  test("the table names every non-2xx status; problems spare only the provoked 429s", () => {
    expect(tableRows([summary])[0]?.["non-2xx"]).toBe("429x1 500x1");
    expect(tableRows([summary])[0]?.["cores gen/srv/pg/rest"]).toBe("0.4/1.1/0.3/0.15");
    expect(tableRows([summary])[0]?.["srv thread run/wait %"]).toBe("70/27");
    const withoutThread = { ...summary, cpu: summary.cpu && { ...summary.cpu, serverThread: null } };
    expect(tableRows([withoutThread])[0]?.["srv thread run/wait %"]).toBe("-");
    expect(problemsOf([summary], ["429"])).toEqual([
      "ingest c=2: 1 connection errors (1 timeouts)",
      "ingest c=2: 1 responses with status 500",
    ]);
    expect(problemsOf([summary], [])).toContain("ingest c=2: 1 responses with status 429");
  });

  test("writes the JSON report and an SVG chart", async () => {
    const report: Report = {
      scenario: "ingest",
      startedAt: "2026-01-02T03:04:05.678Z",
      command: "bun run load -- --scenario ingest",
      machine: { cores: 2, memoryGiB: 23, cpu: "test", bun: "1", postgres: "15", loadAverage: 1 },
      setup: {},
      runs: [summary, { ...summary, target: "bare", connections: 4, label: "bare c=4" }],
      ratios: { "rollcall batches/s as % of bare @2": 12.5 },
      sweep: null,
      problems: [],
    };
    const svg = await connectionsChart("ingest", report.runs);
    expect(svg.startsWith("<svg")).toBe(true);
    const paths = writeReport(report, svg, directory);
    expect(paths.map((path) => path.slice(directory.length))).toEqual([
      "/ingest-2026-01-02T03-04-05.json",
      "/ingest-2026-01-02T03-04-05.svg",
    ]);
    expect(JSON.parse(readFileSync(paths[0] ?? "", "utf8")).runs[0].batchesPerSecond).toBe(3);
    const heatMap = await sweepChart("sweep", [{ shards: 4, workers: 1, batchesPerSecond: 812, p99: 40.5 }]);
    expect(heatMap).toContain("812");
  });
});

describe("CPU split of a run", () => {
  const sample = (wallMs: number, ticks: number, runningNs: number, waitingNs: number): CpuSample => ({
    wallMs,
    generator: ticks,
    server: 2 * ticks,
    serverThread: { runningNs, waitingNs },
    backends: new Map([[7, ticks]]),
    busy: 5 * ticks,
    idle: ticks,
  });

  test("the server's main thread: running and waiting for a core, in percent of the wall time", () => {
    // 10 s: 7 s on a core and 2.5 s in the run queue; 100 ticks are 1 s of CPU, 0.1 of a core.
    const share = cpuBetween(sample(0, 0, 1e9, 5e8), sample(10_000, 100, 8e9, 3e9));
    expect(share).toEqual({
      generator: 0.1,
      server: 0.2,
      serverThread: { running: 70, waiting: 25 },
      postgres: 0.1,
      rest: 0.1,
      idle: 0.1,
    });
    const gone = { ...sample(10_000, 100, 0, 0), serverThread: null };
    expect(cpuBetween(sample(0, 0, 0, 0), gone).serverThread).toBeNull();
  });

  test("schedstat text: time on a core, then time waiting, in nanoseconds", () => {
    expect(parseSchedstat("7000000000 2500000000 52495\n")).toEqual({ runningNs: 7e9, waitingNs: 2.5e9 });
    expect(parseSchedstat("")).toBeNull();
    expect(parseSchedstat("12 x 3")).toBeNull();
  });
});

/** The options of a command line that must parse (not --help). */
function parsed(argv: string[], databaseUrl: string | null = null): LoadOptions {
  const options = parseLoadArgs(argv, databaseUrl);
  if (options === null) throw new Error("expected options, got the usage text");
  return options;
}

describe("load runner arguments", () => {
  test("lists, ranges and defaults", () => {
    const options = parsed([
      "--scenario",
      "ingest",
      "--connections",
      "8,32",
      "--batch-size",
      "200",
      "--server-env",
      "A=b=c",
    ]);
    expect(options.connections).toEqual([8, 32]);
    expect(options.batchSize).toEqual({ min: 200, max: 200 });
    expect(options.keptItems).toBe(0);
    expect(options.serverEnv).toEqual({ A: "b=c" });
    expect(parsed(["--scenario", "history"]).keptItems).toBe(10_000);
    expect(parsed(["--scenario", "sweep"]).shards).toEqual([1, 4, 16, 64]);
    expect(
      parsed(["--scenario", "ingest", "--server-env", "RATE_LIMIT_ENABLED=true"]).expectedStatuses,
    ).toEqual(["429"]);
    expect(parsed(["--scenario", "mixed", "--users", "7"]).users).toBe(7);
    expect(parseLoadArgs(["--help"], null)).toBeNull();
    expect(parseLoadArgs(["-h"], null)).toBeNull();
    expect(options.expectedStatuses).toEqual([]);
  });

  test("refuses what would aim the load elsewhere or make no sense", () => {
    const parse =
      (...argv: string[]) =>
      () =>
        parseLoadArgs(argv, "postgres://127.0.0.1/db");
    expect(parse("--scenario", "ingest", "--url", "http://example.com:3000", "--key", "k")).toThrow(
      UsageError,
    );
    expect(parse("--scenario", "ingest", "--url", "http://127.0.0.1:3000")).toThrow(UsageError);
    expect(parse("--scenario", "sweep", "--url", "http://127.0.0.1:3000", "--key", "k")).toThrow(UsageError);
    expect(parse("--scenario", "nope")).toThrow(UsageError);
    expect(parse("--scenario", "ingest", "--batch-size", "300")).toThrow(UsageError);
    expect(parse("--scenario", "ingest", "--bogus")).toThrow(UsageError);
    expect(parse("--scenario", "ingest", "--batch-size", "200-50")).toThrow(/MIN <= MAX/);
    expect(parse("--scenario", "stats", "--users", "5")).toThrow(/--kept-items/);
    expect(parse("--scenario", "sweep", "--connections", "8,32")).toThrow(/one connection count/);
    expect(parse("--scenario", "ingest", "--shards", "1,4")).toThrow(/sweep's grid/);
    expect(
      parse("--scenario", "ingest", "--url", "http://127.0.0.1:3000", "--key", "k", "--shards", "4"),
    ).toThrow(/not with --url/);
  });
});

describe("history workload", () => {
  test("follows each next_cursor before starting another user's first page", () => {
    const workload = historyWorkload(["u1", "u2"]);
    const first = workload.next();
    expect(first.path).toBe("/v1/users/u1/events?limit=25&include_media=true");
    workload.onResponse?.(first, 200, '{"events":[],"next_cursor":"c/1+x","has_more":true}');
    const second = workload.next();
    expect(second.path).toBe("/v1/users/u1/events?limit=25&include_media=true&cursor=c%2F1%2Bx");
    workload.onResponse?.(second, 200, '{"events":[],"next_cursor":null,"has_more":false}');
    expect(workload.next().path).toBe("/v1/users/u2/events?limit=25&include_media=true");
    expect(workload.next().path).toBe("/v1/users/u1/events?limit=25&include_media=true");
  });
});
