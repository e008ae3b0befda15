/** The scale-up model the load report prints under each run (docs/performance.md, Scaling up). */
import { describe, expect, test } from "bun:test";
import { scaleModel } from "../load/report/scaleModel.ts";
import type { RunSummary } from "../load/report/summary.ts";

function run(batchesPerSecond: number, server: number | null, postgres: number): RunSummary {
  return {
    label: "rollcall c=32",
    target: "rollcall",
    batchesPerSecond,
    requestsPerSecond: batchesPerSecond,
    cpu: { generator: 0.2, server, serverThread: null, postgres, rest: 0, idle: 0 },
  } as unknown as RunSummary;
}

describe("scale-up model", () => {
  test("CPU per batch from the run, divided into each core count; the lower side binds", () => {
    // 500 batches/s on 0.8 server cores and 0.6 PostgreSQL cores: 1.6 and 1.2 ms a batch.
    const model = scaleModel(run(500, 0.8, 0.6), [4, 8]);
    expect(model).toEqual({
      serverCpuMs: 1.6,
      postgresCpuMs: 1.2,
      rows: [
        { cores: 4, serverBound: 2500, postgresBound: 3333, perSecond: 2500, bound: "server" },
        { cores: 8, serverBound: 5000, postgresBound: 6667, perSecond: 5000, bound: "server" },
      ],
    });
  });

  test("PostgreSQL binds when it costs more a batch; no model without CPU figures or traffic", () => {
    expect(scaleModel(run(500, 0.4, 0.8), [16])?.rows[0]).toMatchObject({
      perSecond: 10_000,
      bound: "postgres",
    });
    expect(scaleModel(run(500, null, 0.8))).toBeNull();
    expect(scaleModel(run(0, 0.5, 0.5))).toBeNull();
  });
});
