import { mixedWorkload } from "../drive/mixed.ts";
import { connectionsChart } from "../report/charts.ts";
import type { RunSummary } from "../report/summary.ts";
import { keptUsers } from "../target/users.ts";
import { measure, prepareTraffic, type Scenario } from "./common.ts";

/** Sessions pre-built per run: enough that a run rarely sees the same session twice at once. */
const SESSIONS = 4_000;

/** The partner flow (docs/api.md §6) at the read/write mix of SESSION_MIX (load/drive/mixed.ts). */
export const mixed: Scenario = async (context) => {
  const { options, target } = context;
  const { plan, userIds } = await prepareTraffic(context);
  const returning = await keptUsers(target.store, target.partnerId);
  const fresh = plan.users.map((user, i) => ({ id: userIds[i] as string, email: user.email }));
  const runs: RunSummary[] = [];
  const workload = () =>
    mixedWorkload({ seed: options.seed, returning, fresh, batches: plan.batches, sessions: SESSIONS });
  for (const connections of options.connections) runs.push(await measure(context, { connections, workload }));
  return { runs, ratios: {}, sweep: null, chart: await connectionsChart("mixed partner flow", runs) };
};
