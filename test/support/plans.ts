import type postgres from "postgres";

/** A node of an EXPLAIN (FORMAT JSON) plan, with the members the plan tests read. */
export type PlanNode = {
  "Node Type": string;
  "Join Type"?: string;
  "Relation Name"?: string;
  "CTE Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
};

/** The node and every node under it. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** The index each read of `relation` descends (a bitmap scan's through its index scans), or its type. */
export function accessesOf(relation: string, node: PlanNode): string[] {
  if (node["Relation Name"] !== relation)
    return (node.Plans ?? []).flatMap((child) => accessesOf(relation, child));
  const bitmapIndexes = (node.Plans ?? []).flatMap((child) => child["Index Name"] ?? []);
  return [node["Index Name"] ?? (bitmapIndexes.length > 0 ? bitmapIndexes.join("+") : node["Node Type"])];
}

/** How each read of `relation` finds its rows: its index (or its type) and the condition it probes with. */
export function readsOf(relation: string, node: PlanNode): string[] {
  return planNodes(node)
    .filter((child) => child["Relation Name"] === relation && child["Node Type"] !== "ModifyTable")
    .map((child) => `${child["Index Name"] ?? child["Node Type"]}: ${child["Index Cond"] ?? "all rows"}`);
}

/** The plan PostgreSQL makes for `text` run with `params` now, on `connection`. */
export async function explained(
  connection: Pick<postgres.Sql, "unsafe">,
  text: string,
  params: readonly unknown[] = [],
): Promise<PlanNode> {
  const [row] = await connection.unsafe(`explain (format json) ${text}`, params as never[]);
  const [plan] = (row?.["QUERY PLAN"] ?? []) as { Plan: PlanNode }[];
  if (plan === undefined) throw new Error("EXPLAIN returned no plan");
  return plan.Plan;
}
