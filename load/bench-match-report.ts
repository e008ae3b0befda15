import { cpus, loadavg } from "node:os";
import { writeResultJson } from "./report/write.ts";

/** What the matching benchmark measured, and the Markdown tables it prints for docs/performance.md §3. */

export type BuildRow = {
  events: number;
  shards: number;
  seconds: number;
  cpuSeconds: number;
  bytesPerEvent: number;
  peakRssMb: number;
};
export type MatchRow = {
  events: number;
  shards: number;
  workers: number;
  sequential: number;
  concurrent: number;
  /** Items per CPU-second of the whole process in the concurrent run (the only run for WORKERS=0). */
  perCpuSecond: number;
};
export type GranularityRow = { events: number; minTaskItems: number; sequential: number; concurrent: number };
export type PostgisRow = {
  events: number;
  loadSeconds: number;
  sequential: number;
  concurrent: number;
  engineInline: number;
  agreement: number;
};

export type BenchResults = {
  builds: BuildRow[];
  matches: MatchRow[];
  granularity: GranularityRow[];
  postgis: PostgisRow[];
};

const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function markdown(results: BenchResults): string {
  const rate = (events: number, shards: number, workers: number) =>
    results.matches.find((m) => m.events === events && m.shards === shards && m.workers === workers);
  const matchRows = results.builds.map((b) => {
    const inline = rate(b.events, b.shards, 0);
    const one = rate(b.events, b.shards, 1);
    const two = rate(b.events, b.shards, 2);
    return [
      thousands(b.events),
      b.shards,
      thousands(inline?.sequential ?? 0),
      `${thousands(one?.sequential ?? 0)} / ${thousands(one?.concurrent ?? 0)}`,
      `${thousands(two?.sequential ?? 0)} / ${thousands(two?.concurrent ?? 0)}`,
      `${thousands(inline?.perCpuSecond ?? 0)} / ${thousands(two?.perCpuSecond ?? 0)}`,
    ];
  });
  const sections = [
    "Items matched per second (200-item batches; pool: one batch at a time / 16 in flight), and items",
    "per CPU-second of the process (WORKERS=0 / WORKERS=2 with 16 in flight):",
    "",
    table(["events", "SHARDS", "WORKERS=0", "WORKERS=1", "WORKERS=2", "per CPU-second"], matchRows),
    "",
    "Index build (wall time on the two build threads, CPU time of both) and peak RSS of this process:",
    "",
    table(
      ["events", "SHARDS", "build s (wall)", "build s (CPU)", "index bytes/event", "peak RSS MB"],
      results.builds.map((b) => [
        thousands(b.events),
        b.shards,
        b.seconds,
        b.cpuSeconds,
        b.bytesPerEvent,
        b.peakRssMb,
      ]),
    ),
  ];
  if (results.granularity.length > 0) {
    sections.push(
      "",
      "Task granularity (WORKERS=2, fewest captures per task; one batch at a time / 16 in flight):",
      "",
      table(
        ["events", "minTaskItems", "items/s sequential", "items/s concurrent"],
        results.granularity.map((g) => [
          thousands(g.events),
          g.minTaskItems,
          thousands(g.sequential),
          thousands(g.concurrent),
        ]),
      ),
    );
  }
  if (results.postgis.length > 0) {
    sections.push(
      "",
      "PostGIS baseline (GiST on (geography, window), one query per batch, same batches):",
      "",
      table(
        [
          "events",
          "PostGIS 1 conn",
          "PostGIS 4 conns",
          "engine WORKERS=0",
          "engine / best PostGIS",
          "same answers",
        ],
        results.postgis.map((p) => [
          thousands(p.events),
          thousands(p.sequential),
          thousands(p.concurrent),
          thousands(p.engineInline),
          `${Math.round(p.engineInline / Math.max(p.sequential, p.concurrent))}x`,
          `${p.agreement.toFixed(2)}%`,
        ]),
      ),
    );
  }
  return sections.join("\n");
}

/** Writes the JSON next to the other load results (gitignored) and returns its path. */
export function save(results: BenchResults, settings: object): string {
  const machine = { cpus: cpus().length, loadAverage: loadavg() };
  const path = writeResultJson("bench-match", { settings, machine, ...results });
  return `${path} (${machine.cpus} cpus, load average ${machine.loadAverage.map((l) => l.toFixed(2)).join(" ")})`;
}
