import type { Workload } from "../drive/cannon.ts";
import { historyWorkload, statsWorkload } from "../drive/workloads.ts";
import { connectionsChart } from "../report/charts.ts";
import type { RunSummary } from "../report/summary.ts";
import { keptUsers } from "../target/users.ts";
import { measure, type Scenario, type ScenarioContext } from "./common.ts";

/**
 * Read scenarios run over the users with kept items (--kept-items), one run per connection count. The
 * warm-up and the runs share one pass over the users, each going on where the last stopped: started
 * afresh, every run would read again the users the one before it had just read, whose pages the
 * server still holds in its caches, which users coming back at random would not find there (at 10M
 * kept items most users have one page, and a run of 20 s reads most of the 40,245 users). A set of users smaller than one
 * run's reads (10k kept items: 39 users) is read round and round, as before.
 */
async function readScenario(context: ScenarioContext, title: string, workload: (ids: string[]) => Workload) {
  const users = await keptUsers(context.target.store, context.target.partnerId);
  if (users.length === 0) {
    throw new Error(`${context.options.scenario} needs users with history: pass --kept-items N`);
  }
  const onePass = workload(users.map((user) => user.id));
  const runs: RunSummary[] = [];
  for (const connections of context.options.connections) {
    runs.push(await measure(context, { connections, workload: () => onePass }));
  }
  return { runs, ratios: {}, sweep: null, chart: await connectionsChart(title, runs) };
}

/** History pages with media, following next_cursor to the last page of each user. */
export const history: Scenario = (context) =>
  readScenario(context, "history: events pages with media", historyWorkload);

export const stats: Scenario = (context) => readScenario(context, "stats", statsWorkload);
