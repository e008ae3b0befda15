import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SweepCell } from "./charts.ts";
import type { Machine } from "./machine.ts";
import { describeModel, type ScaleModel, scaleModel } from "./scaleModel.ts";
import { kindRows, type RunSummary, tableRows } from "./summary.ts";

export const RESULTS_DIR = join(import.meta.dir, "..", "results");

/** Everything one invocation measured, written as JSON next to its chart. */
export type Report = {
  scenario: string;
  startedAt: string;
  /** The command line, so the figures can be reproduced. */
  command: string;
  machine: Machine;
  /** Catalog size, kept items, users, server settings: what the numbers were measured against. */
  setup: Record<string, unknown>;
  runs: RunSummary[];
  /** Named ratios of the same invocation (rollcall against a baseline). */
  ratios: Record<string, number>;
  sweep: SweepCell[] | null;
  /** Anything that breaks "no errors, no non-2xx but provoked 429s". Empty on a clean run. */
  problems: string[];
};

/** Errors, timeouts and unexpected statuses of every run. */
export function problemsOf(runs: readonly RunSummary[], expectedStatuses: readonly string[]): string[] {
  const problems: string[] = [];
  for (const run of runs) {
    if (run.errors > 0)
      problems.push(`${run.label}: ${run.errors} connection errors (${run.timeouts} timeouts)`);
    for (const [status, count] of Object.entries(run.non2xx)) {
      if (!expectedStatuses.includes(status))
        problems.push(`${run.label}: ${count} responses with status ${status}`);
    }
  }
  return problems;
}

export function printReport(report: Report): void {
  console.log(`\n${report.scenario}: ${JSON.stringify(report.setup)}`);
  console.table(tableRows(report.runs));
  for (const run of report.runs) {
    if (Object.keys(run.byKind).length > 1) {
      console.log(`${run.label} by request kind:`);
      console.table(kindRows(run));
    }
  }
  for (const run of report.runs) {
    const model = run.target === "rollcall" ? scaleModel(run) : null;
    if (model !== null) for (const line of describeModel(run.label, model)) console.log(line);
  }
  for (const [name, value] of Object.entries(report.ratios)) console.log(`${name}: ${value}`);
  for (const problem of report.problems) console.log(`PROBLEM ${problem}`);
}

/** `<name>-<time>` under the results directory, with a file-name-safe timestamp (no colons, no fraction). */
export function resultBase(name: string, isoTime: string, directory: string): string {
  mkdirSync(directory, { recursive: true });
  return join(directory, `${name}-${isoTime.replaceAll(":", "-").replace(/\..*/, "")}`);
}

/** Writes a benchmark's JSON result as `<name>-<now>.json`; returns its path. */
export function writeResultJson(name: string, result: unknown, directory = RESULTS_DIR): string {
  const path = `${resultBase(name, new Date().toISOString(), directory)}.json`;
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** Writes `<scenario>-<time>.json` and, when there is one, the `.svg` chart; returns the paths. */
export function writeReport(report: Report, svg: string | null, directory = RESULTS_DIR): string[] {
  const base = resultBase(report.scenario, report.startedAt, directory);
  const models: Record<string, ScaleModel> = {};
  for (const run of report.runs) {
    const model = run.target === "rollcall" ? scaleModel(run) : null;
    if (model !== null) models[run.label] = model;
  }
  writeFileSync(`${base}.json`, `${JSON.stringify({ ...report, scaleModel: models }, null, 2)}\n`);
  if (svg === null) return [`${base}.json`];
  writeFileSync(`${base}.svg`, svg);
  return [`${base}.json`, `${base}.svg`];
}
