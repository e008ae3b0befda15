import { ingestWorkload } from "../drive/workloads.ts";
import { type SweepCell, sweepChart } from "../report/charts.ts";
import type { RunSummary } from "../report/summary.ts";
import { forgetMedia } from "../target/users.ts";
import { measure, prepareTraffic, type Scenario } from "./common.ts";

/**
 * Ingest over the SHARDS x WORKERS grid at the largest connection count, the server restarted for each
 * cell and every cell starting from the same database state.
 */
export const sweep: Scenario = async (context) => {
  const { options, target } = context;
  const { plan, userIds } = await prepareTraffic(context);
  const connections = Math.max(...options.connections);
  const runs: RunSummary[] = [];
  const cells: SweepCell[] = [];
  for (const shards of options.shards) {
    for (const workers of options.workers) {
      await target.restart({ shards, workers });
      const run = await measure(context, {
        connections,
        workload: () => ingestWorkload(userIds, plan.batches),
        reset: () => forgetMedia(target.store, userIds),
        label: `SHARDS=${shards} WORKERS=${workers}`,
      });
      runs.push(run);
      cells.push({ shards, workers, batchesPerSecond: run.batchesPerSecond, p99: run.latency.p99 });
    }
  }
  const chart = await sweepChart(`ingest at ${connections} connections: SHARDS x WORKERS`, cells);
  return { runs, ratios: {}, sweep: cells, chart };
};
