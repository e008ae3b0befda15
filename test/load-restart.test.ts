import { describe, expect, test } from "bun:test";
import { parseLoadArgs, UsageError } from "../load/args.ts";
import { restartChart } from "../load/report/restartChart.ts";
import { restartFindings, restartProblems } from "../load/report/restartReport.ts";
import { percentile, perSecond, rateBetween, recovery, type Sample } from "../load/report/timeline.ts";

const media = (sentMs: number, doneMs: number, status: number | null): Sample => ({
  kind: "media",
  sentMs,
  doneMs,
  status,
  items: 200,
});
const stats = (sentMs: number, doneMs: number, status: number | null): Sample => ({
  kind: "stats",
  sentMs,
  doneMs,
  status,
  items: 0,
});

/** Two kinds through a fault at 2,000 ms: 500s, a dropped connection, then 200s again. */
const run: Sample[] = [
  media(100, 150, 200),
  stats(120, 130, 200),
  media(1_100, 1_300, 200),
  stats(1_900, 2_050, 500),
  media(1_950, 2_400, null),
  media(2_450, 2_500, 500),
  stats(2_100, 2_600, 200),
  stats(2_550, 2_700, 200),
  media(2_520, 2_900, 200),
  media(3_000, 3_200, 200),
  stats(3_500, 4_200, 200),
];

describe("a run second by second", () => {
  test("counts each request in the second it ended, by kind and outcome", () => {
    const seconds = perSecond(run, 4);
    expect(seconds.map((second) => second.total.ok)).toEqual([2, 1, 3, 1]);
    expect(seconds[2]?.total).toMatchObject({ serverErrors: 2, noAnswer: 1, otherStatuses: 0 });
    expect(seconds[2]?.byKind.media).toMatchObject({ ok: 1, serverErrors: 1, noAnswer: 1 });
    expect(seconds[2]?.byKind.stats).toMatchObject({ ok: 2, serverErrors: 1 });
    // The no-answer is no latency; the slowest answer of second 2 is the 500 ms stats read.
    expect(seconds[2]?.total.p99Ms).toBe(500);
    // The request that ended after the run (4,200 ms) is in no second.
    expect(seconds.reduce((sum, second) => sum + second.total.ok, 0)).toBe(7);
  });

  test("nearest-rank percentiles", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBeNull();
  });

  test("recovery: every kind answered 200 by a request sent after the last failure", () => {
    // The last failure was sent at 2,450 ms; stats' next 200 ends at 2,700, media's at 2,900.
    expect(recovery(run, 2_000)).toEqual({ failures: 3, lastFailureSentMs: 2_450, recoveredMs: 2_900 });
    expect(recovery(run.slice(0, 3), 2_000)).toEqual({
      failures: 0,
      lastFailureSentMs: null,
      recoveredMs: 2_000,
    });
    // Media never succeeds again: not recovered.
    expect(recovery(run.slice(0, 8), 2_000).recoveredMs).toBeNull();
  });

  test("rates count the 2xx answers that ended inside the window, and their items", () => {
    expect(rateBetween(run, "media", 0, 2_000)).toEqual({ perSecond: 1, itemsPerSecond: 200 });
    expect(rateBetween(run, "stats", 0, 2_000)).toEqual({ perSecond: 0.5, itemsPerSecond: 0 });
  });

  test("findings: seconds with 5xx, recovery from the restart and from the cluster's return", () => {
    const findings = restartFindings(run, 4, { restartMs: 2_000, backMs: 2_400, recoveredMs: null });
    expect(findings.secondsWith5xx).toBe(1);
    expect(findings.secondsWithOtherErrors).toBe(1);
    expect(findings.recoveryMs).toBe(900);
    expect(findings.recoveryAfterBackMs).toBe(500);
    expect(findings.marks.recoveredMs).toBe(2_900);
    expect(findings.totals.media).toEqual({ requests: 6, ok: 4, serverErrors: 1, otherErrors: 1 });
    expect(findings.failuresBeforeRestart).toBe(0);
    expect(restartProblems(findings, true)).toEqual([]);
    expect(restartProblems(findings, false)).toHaveLength(1);
    const early = restartFindings([media(0, 50, 500), ...run], 4, {
      restartMs: 2_000,
      backMs: 2_400,
      recoveredMs: null,
    });
    expect(restartProblems(early, true)).toEqual(["requests that failed before the restart: 1"]);
  });

  test("the chart draws the series, the fault's window and the recovery", async () => {
    const findings = restartFindings(run, 4, { restartMs: 2_000, backMs: 2_400, recoveredMs: null });
    const title = { text: "restart", subtitle: "1 s with 5xx" };
    const svg = await restartChart(title, findings.seconds, findings.marks);
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of ["ingest 2xx", "stats 2xx", "other errors", "pg_ctl restart -m fast", "1 s with 5xx"])
      expect(svg).toContain(text);
  });
});

describe("restart arguments", () => {
  const parse = (...argv: string[]) => parseLoadArgs(["--scenario", "restart", ...argv], null);

  test("defaults: 200-item batches, kept users to read, a restart a third of the way in", () => {
    const options = parse("--duration", "30", "--connections", "16");
    expect(options?.restartAtSeconds).toBe(10);
    expect(options?.batchSize).toEqual({ min: 200, max: 200 });
    expect(options?.keptItems).toBe(10_000);
    expect(parse("--duration", "30", "--restart-at", "12")?.restartAtSeconds).toBe(12);
    expect(parseLoadArgs(["--scenario", "ingest"], null)?.restartAtSeconds).toBeNull();
  });

  test("refuses a restart outside the run, a running server, and what does not fit", () => {
    expect(() => parse("--duration", "30", "--restart-at", "29")).toThrow(UsageError);
    expect(() => parse("--duration", "2")).toThrow(/--duration 3/);
    expect(() => parse("--url", "http://127.0.0.1:3000", "--key", "k")).toThrow(/self-started/);
    expect(() => parse("--connections", "8,16")).toThrow(/one connection count/);
    expect(() => parse("--connections", "3")).toThrow(UsageError);
    expect(() => parse("--keep-db")).toThrow(/--keep-db/);
    expect(() => parseLoadArgs(["--scenario", "ingest", "--restart-at", "3"], null)).toThrow(/restart/);
  });
});
