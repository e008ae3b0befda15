import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { RunSummary } from "./summary.ts";

/** Charts are Vega-Lite specifications rendered to SVG headless (no browser, no canvas). */
export async function render(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const WIDTH = 320;
const HEIGHT = 220;

/** Throughput and p99 latency against connections, one line per target (service, bare baseline). */
export function connectionsChart(title: string, runs: readonly RunSummary[]): Promise<string> {
  const values = runs.map((run) => ({
    target: run.target,
    connections: run.connections,
    requestsPerSecond: run.requestsPerSecond,
    p99: run.latency.p99,
  }));
  const panel = (field: string, axisTitle: string) => ({
    width: WIDTH,
    height: HEIGHT,
    mark: { type: "line" as const, point: true },
    encoding: {
      x: { field: "connections", type: "ordinal" as const, title: "connections", axis: { labelAngle: 0 } },
      y: { field, type: "quantitative" as const, title: axisTitle },
      color: { field: "target", type: "nominal" as const, title: null },
    },
  });
  return render({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    data: { values },
    hconcat: [panel("requestsPerSecond", "requests per second"), panel("p99", "p99 latency (ms)")],
  });
}

export type SweepCell = { shards: number; workers: number; batchesPerSecond: number; p99: number };

/** The SHARDS x WORKERS sweep as two heat maps (batches/s and p99), each cell labelled with its value. */
export function sweepChart(title: string, cells: readonly SweepCell[]): Promise<string> {
  const heatMap = (field: string, legend: string, scheme: string, format: string) => ({
    width: WIDTH,
    height: HEIGHT,
    // The range of the map, so that labels on the darkest cells (top 40% of the scale) can turn white.
    transform: [
      {
        joinaggregate: [
          { op: "min" as const, field, as: "low" },
          { op: "max" as const, field, as: "top" },
        ],
      },
    ],
    encoding: {
      x: { field: "workers", type: "ordinal" as const, title: "WORKERS", axis: { labelAngle: 0 } },
      y: { field: "shards", type: "ordinal" as const, title: "SHARDS", sort: "descending" as const },
    },
    layer: [
      {
        mark: "rect" as const,
        encoding: { color: { field, type: "quantitative" as const, title: legend, scale: { scheme } } },
      },
      {
        mark: { type: "text" as const, fontSize: 12 },
        encoding: {
          text: { field, type: "quantitative" as const, format },
          color: {
            condition: {
              test: `datum['${field}'] - datum.low > 0.6 * (datum.top - datum.low)`,
              value: "white",
            },
            value: "black",
          },
        },
      },
    ],
  });
  return render({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    data: { values: cells.map((cell) => ({ ...cell })) },
    hconcat: [
      heatMap("batchesPerSecond", "batches/s", "greens", ",.0f"),
      heatMap("p99", "p99 ms", "oranges", ",.1f"),
    ],
    resolve: { scale: { color: "independent" } },
  });
}
