import { ingestWorkload } from "../drive/workloads.ts";
import { connectionsChart } from "../report/charts.ts";
import type { RunSummary } from "../report/summary.ts";
import { startServer } from "../target/server.ts";
import { forgetMedia } from "../target/users.ts";
import { measure, prepareTraffic, type Scenario } from "./common.ts";

const percent = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);

/**
 * Media batches at each connection count, every run starting from the same state; then, in the same
 * invocation, the same batches against the bare Elysia route (load/bare-server.ts) for the ratio.
 */
export const ingest: Scenario = async (context) => {
  const { options, target, log } = context;
  const { plan, userIds } = await prepareTraffic(context);
  const runs: RunSummary[] = [];
  const workload = () => ingestWorkload(userIds, plan.batches);
  const reset = () => forgetMedia(target.store, userIds);
  for (const connections of options.connections)
    runs.push(await measure(context, { connections, workload, reset }));
  const ratios: Record<string, number> = {};
  if (options.baseline) {
    log("starting the bare Elysia baseline");
    const bare = await startServer("load/bare-server.ts", {}, { label: "bare", readyTimeoutMs: 30_000 });
    try {
      for (const [i, connections] of options.connections.entries()) {
        const baseline = await measure(context, {
          connections,
          workload,
          label: `bare c=${connections}`,
          against: { target: "bare", baseUrl: bare.baseUrl, pid: bare.pid },
        });
        runs.push(baseline);
        const service = runs[i];
        if (service) {
          ratios[`rollcall batches/s as % of bare @${connections}`] = percent(
            service.batchesPerSecond,
            baseline.batchesPerSecond,
          );
        }
      }
    } finally {
      await bare.stop();
    }
  }
  return { runs, ratios, sweep: null, chart: await connectionsChart("ingest: media batches", runs) };
};
