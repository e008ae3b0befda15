import { readFileSync } from "node:fs";
import { type BenchResults, markdown } from "./bench-match-report.ts";

/**
 * `bun load/bench-match-merge.ts load/results/bench-match-A.json load/results/bench-match-B.json`
 * Prints the benchmark's tables over several runs, taking per cell the best of them (highest rate,
 * shortest build): on a shared machine other processes only ever slow a run down.
 */

type Row = Record<string, number>;
type Better = Record<string, "max" | "min">;

const runs = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, "utf8")) as BenchResults);
const [first, ...others] = runs;
if (first === undefined) {
  console.error("usage: bun load/bench-match-merge.ts RESULT.json [RESULT.json ...]");
  process.exit(2);
}

function merge(base: BenchResults, part: keyof BenchResults, identity: string[], better: Better): Row[] {
  const keyOf = (row: Row) => identity.map((field) => row[field]).join("/");
  return (base[part] as unknown as Row[]).map((row) => {
    const merged: Row = { ...row };
    for (const run of others) {
      const same = (run[part] as unknown as Row[]).find((other) => keyOf(other) === keyOf(row));
      if (same === undefined) continue;
      for (const [field, direction] of Object.entries(better)) {
        const pick = direction === "max" ? Math.max : Math.min;
        merged[field] = pick(merged[field] ?? 0, same[field] ?? 0);
      }
    }
    return merged;
  });
}

const results = {
  builds: merge(first, "builds", ["events", "shards"], {
    seconds: "min",
    cpuSeconds: "min",
    peakRssMb: "min",
  }),
  matches: merge(first, "matches", ["events", "shards", "workers"], {
    sequential: "max",
    concurrent: "max",
    perCpuSecond: "max",
  }),
  granularity: merge(first, "granularity", ["events", "minTaskItems"], {
    sequential: "max",
    concurrent: "max",
  }),
  postgis: merge(first, "postgis", ["events"], { sequential: "max", concurrent: "max", engineInline: "max" }),
} as unknown as BenchResults;
console.log(markdown(results));
