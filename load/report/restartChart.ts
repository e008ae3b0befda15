import type { RequestKind } from "../drive/recorder.ts";
import { render } from "./charts.ts";
import type { Second } from "./timeline.ts";

/** Instants of the run, in milliseconds from its start. */
export type Marks = {
  /** `pg_ctl restart` issued. */
  restartMs: number;
  /** `pg_ctl restart` returned: the cluster accepts connections again. */
  backMs: number;
  /** Every kind of request answered 200 again; null when that did not happen within the run. */
  recoveredMs: number | null;
};

const KIND_NAMES: Partial<Record<RequestKind, string>> = {
  media: "ingest 2xx",
  events: "history 2xx",
  stats: "stats 2xx",
};
const SERIES = ["ingest 2xx", "history 2xx", "stats 2xx", "5xx", "other errors"];
const COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#ff7f0e"];
const WIDTH = 640;

/**
 * Answers per second by kind, failures per second, and p99 per second, over the run: the fault's
 * window (restart issued to the cluster back) shaded, and a dashed rule where every route answered 200
 * again.
 * Each second's values sit at its middle, so a line between two seconds is the change between them.
 */
export function restartChart(
  title: { text: string; subtitle: string },
  seconds: readonly Second[],
  marks: Marks,
): Promise<string> {
  const rows: { second: number; series: string; value: number }[] = [];
  const latency: { second: number; p99: number }[] = [];
  for (const { second, total, byKind } of seconds) {
    const at = second + 0.5;
    for (const [kind, tally] of Object.entries(byKind)) {
      const series = KIND_NAMES[kind as RequestKind];
      if (series && tally) rows.push({ second: at, series, value: tally.ok });
    }
    rows.push({ second: at, series: "5xx", value: total.serverErrors });
    rows.push({ second: at, series: "other errors", value: total.noAnswer + total.otherStatuses });
    if (total.p99Ms !== null) latency.push({ second: at, p99: Math.max(0.1, total.p99Ms) });
  }
  const x = {
    field: "second",
    type: "quantitative" as const,
    title: "seconds into the run",
    scale: { domain: [0, seconds.length] },
  };
  const window = {
    data: {
      values: [{ from: marks.restartMs / 1000, to: Math.max(marks.backMs, marks.restartMs + 50) / 1000 }],
    },
    mark: { type: "rect" as const, color: "#888", opacity: 0.25 },
    encoding: { x: { field: "from", type: "quantitative" as const }, x2: { field: "to" } },
  };
  const label = (at: number, text: string, align: "left" | "right") => ({
    data: { values: [{ at, text }] },
    mark: { type: "text" as const, align, dx: align === "left" ? 4 : -4, dy: -6, y: 0, fontSize: 11 },
    encoding: {
      x: { field: "at", type: "quantitative" as const },
      text: { field: "text", type: "nominal" as const },
    },
  });
  const recovered =
    marks.recoveredMs === null
      ? []
      : [
          {
            data: { values: [{ at: marks.recoveredMs / 1000 }] },
            mark: { type: "rule" as const, color: "#2ca02c", strokeDash: [4, 3] },
            encoding: { x: { field: "at", type: "quantitative" as const } },
          },
        ];
  const labels = [
    label(marks.restartMs / 1000, "pg_ctl restart -m fast", "right"),
    ...(marks.recoveredMs === null ? [] : [label(marks.recoveredMs / 1000, "all routes 200 again", "left")]),
  ];
  return render({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    vconcat: [
      {
        width: WIDTH,
        height: 240,
        layer: [
          window,
          ...recovered,
          {
            data: { values: rows },
            mark: { type: "line" as const, point: { size: 12 } },
            encoding: {
              x,
              y: { field: "value", type: "quantitative" as const, title: "requests per second" },
              color: {
                field: "series",
                type: "nominal" as const,
                title: null,
                scale: { domain: SERIES, range: COLORS },
              },
            },
          },
          ...labels,
        ],
      },
      {
        width: WIDTH,
        height: 140,
        layer: [
          window,
          ...recovered,
          {
            data: { values: latency },
            mark: { type: "line" as const, point: { size: 12 }, color: "#555" },
            encoding: {
              x,
              y: {
                field: "p99",
                type: "quantitative" as const,
                title: "p99 (ms, log)",
                scale: { type: "log" },
              },
            },
          },
        ],
      },
    ],
  });
}
