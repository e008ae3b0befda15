import type { Workload } from "../drive/cannon.ts";
import { historyWorkload, statsWorkload } from "../drive/workloads.ts";
import { connectionsChart } from "../report/charts.ts";
import type { RunSummary } from "../report/summary.ts";
import { keptUsers } from "../target/users.ts";
import { measure, type Scenario, type ScenarioContext } from "./common.ts";

/** Read scenarios run over the users with kept items (--kept-items), one run per connection count. */
async function readScenario(context: ScenarioContext, title: string, workload: (ids: string[]) => Workload) {
  const users = await keptUsers(context.target.store, context.target.partnerId);
  if (users.length === 0) {
    throw new Error(`${context.options.scenario} needs users with history: pass --kept-items N`);
  }
  const ids = users.map((user) => user.id);
  const runs: RunSummary[] = [];
  for (const connections of context.options.connections) {
    runs.push(await measure(context, { connections, workload: () => workload(ids) }));
  }
  return { runs, ratios: {}, sweep: null, chart: await connectionsChart(title, runs) };
}

/** History pages with media, following next_cursor to the last page of each user. */
export const history: Scenario = (context) =>
  readScenario(context, "history: events pages with media", historyWorkload);

export const stats: Scenario = (context) => readScenario(context, "stats", statsWorkload);
