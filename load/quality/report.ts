import { writeFileSync } from "node:fs";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { GroupResult, RuleResult } from "./evaluate.ts";
import { atThreshold, type RankedMetrics, thin } from "./metrics.ts";

/** The quality benchmark's Markdown tables (for docs/performance.md §11) and its precision-recall chart. */

const fixed = (n: number | null, digits = 3) => (n === null ? "n/a" : n.toFixed(digits));

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** One row per kind of user: what each rule shows, unranked. */
export function rulesTable(before: RuleResult, after: RuleResult): string {
  const rows = after.groups.map((a) => {
    const b = before.groups.find((g) => g.group === a.group) as GroupResult;
    return [
      a.group,
      a.users,
      a.truth,
      `${fixed(b.precision)} / ${fixed(a.precision)}`,
      `${fixed(b.recall)} / ${fixed(a.recall)}`,
      `${b.falsePerUser.toFixed(1)} / ${a.falsePerUser.toFixed(1)}`,
      `${b.falseFromEventsPerUser.toFixed(2)} / ${a.falseFromEventsPerUser.toFixed(2)}`,
    ];
  });
  return table(
    [
      "kind of user",
      "users",
      "true events",
      `precision (${before.rule} / ${after.rule})`,
      "recall (before / after)",
      "false events per user-year (before / after)",
      "of which from photos at another event (before / after)",
    ],
    rows,
  );
}

/** Ranked quality for every rule and ranker, on the groups the targets name. */
export function rankedTable(results: readonly RuleResult[], groups: readonly string[]): string {
  const rows: (string | number)[][] = [];
  for (const group of groups) {
    for (const result of results) {
      // A group the mix has no users of (residents in the new mix) has no row.
      const g = result.groups.find((x) => x.group === group);
      for (const { ranker, metrics } of g?.ranked ?? []) {
        rows.push([group, result.rule, ranker, ...rankedCells(metrics)]);
      }
    }
  }
  return table(
    ["kind of user", "rule", "ranked by", "precision at recall 0.90", "at recall 0.95", "area under P-R"],
    rows,
  );
}

/** A ranking's precision at recall 0.90 and 0.95 and its area under the precision-recall curve. */
const rankedCells = (metrics: RankedMetrics) => [
  fixed(metrics.precisionAt90),
  fixed(metrics.precisionAt95),
  fixed(metrics.averagePrecision),
];

/** One rule's ranked quality by one ranker, a row for each group named. */
export function kindsRankedTable(result: RuleResult, ranker: string, groups: readonly string[]): string {
  const rows: (string | number)[][] = [];
  for (const group of groups) {
    const g = result.groups.find((x) => x.group === group);
    const metrics = g?.ranked.find((r) => r.ranker === ranker)?.metrics;
    if (g === undefined || metrics === undefined) continue;
    rows.push([group, g.users, g.truth, ...rankedCells(metrics)]);
  }
  return table(
    ["kind of user", "users", "true events", "precision at recall 0.90", "at recall 0.95", "area under P-R"],
    rows,
  );
}

/** Precision at recall 0.95 of the named groups, by one rule and ranker, on one line. */
export function precisionAt95Line(result: RuleResult, ranker: string, groups: readonly string[]): string {
  const parts = groups.map((group) => {
    const metrics = result.groups
      .find((g) => g.group === group)
      ?.ranked.find((r) => r.ranker === ranker)?.metrics;
    return `${group} ${fixed(metrics?.precisionAt95 ?? null)}`;
  });
  return `precision at recall 0.95 (${result.rule}, ranked by ${ranker}): ${parts.join(", ")}`;
}

/**
 * Each kind of user's history filtered at one min_confidence, by the named ranker and rule: the share
 * of its true events kept, and the events it was not at still shown per user.
 */
export function thresholdTable(result: RuleResult, ranker: string, threshold: number): string {
  const rows = result.groups.map((g) => {
    const metrics = g.ranked.find((r) => r.ranker === ranker)?.metrics;
    const at =
      metrics === undefined ? { precision: 0, recall: 0, shown: 0 } : atThreshold(metrics, threshold);
    const falseKept = at.shown - Math.round(at.recall * g.truth);
    return [
      g.group,
      fixed(g.precision),
      fixed(g.recall),
      fixed(at.precision),
      fixed(at.recall),
      fixed(g.recall === 0 ? null : at.recall / g.recall),
      g.falsePerUser.toFixed(1),
      g.users === 0 ? "n/a" : (falseKept / g.users).toFixed(2),
    ];
  });
  return table(
    [
      "kind of user",
      "precision, all shown",
      "recall, all shown",
      `precision, ≥ ${threshold}`,
      `recall (true events kept), ≥ ${threshold}`,
      `true events shown that ≥ ${threshold} keeps`,
      "false events per user-year, all shown",
      `false events per user-year, ≥ ${threshold}`,
    ],
    rows,
  );
}

/**
 * The true events of every kind of user by how they were photographed (worldModel.ts ATTENDANCE_WAYS):
 * how many the history shows, and the share of those the min_confidence filter keeps.
 */
export function waysTable(result: RuleResult, ranker: string, threshold: number): string {
  const rows = result.ways
    .filter(({ truth }) => truth > 0)
    .map(({ way, truth, scores }) => {
      const shown = scores.find((s) => s.ranker === ranker)?.shown ?? [];
      const kept = shown.filter((score) => score >= threshold).length;
      return [
        way,
        truth,
        shown.length,
        kept,
        fixed(kept / truth),
        fixed(shown.length === 0 ? null : kept / shown.length),
      ];
    });
  return table(
    [
      "how the event was photographed",
      "true events",
      "in the history",
      `kept, ≥ ${threshold}`,
      "share of true events",
      "share of those shown",
    ],
    rows,
  );
}

/** Precision against recall, one line per rule and ranker, for all kinds and for the attending kinds. */
export async function writeChart(path: string, results: readonly RuleResult[]): Promise<void> {
  const values: { group: string; series: string; recall: number; precision: number }[] = [];
  for (const result of results) {
    for (const group of ["all kinds", "attending kinds"]) {
      const g = result.groups.find((x) => x.group === group) as GroupResult;
      for (const { ranker, metrics } of g.ranked) {
        for (const point of thin(metrics.curve, 150))
          values.push({
            group,
            series: `${result.rule}, ${ranker}`,
            recall: point.recall,
            precision: point.precision,
          });
      }
    }
  }
  const spec: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "Attended events: precision against recall, ranked by confidence",
    data: { values },
    facet: { column: { field: "group", type: "nominal", title: null } },
    spec: {
      width: 320,
      height: 240,
      mark: { type: "line", interpolate: "step-after", clip: true },
      encoding: {
        x: { field: "recall", type: "quantitative", scale: { domain: [0.5, 1] }, title: "recall" },
        y: { field: "precision", type: "quantitative", scale: { domain: [0, 1] }, title: "precision" },
        color: {
          field: "series",
          type: "nominal",
          title: null,
          legend: { orient: "bottom", columns: 1, labelLimit: 600 },
        },
      },
    },
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    writeFileSync(path, await view.toSVG());
  } finally {
    view.finalize();
  }
}
