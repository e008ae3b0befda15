import type autocannon from "autocannon";
import type { KindStats, Latency, RequestKind, ResponseRecorder } from "../drive/recorder.ts";
import type { CpuShare } from "./cpu.ts";

/** One measured run (one server, one connection count), as printed and written to JSON. */
export type RunSummary = {
  label: string;
  /** What served the run: the service, or the bare Elysia baseline. */
  target: "rollcall" | "bare";
  connections: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  /** Media batches answered 2xx per second. */
  batchesPerSecond: number;
  itemsPerSecond: number;
  matchedPerSecond: number;
  latency: Latency;
  /** Every response by status code. */
  statuses: Record<string, number>;
  /** Responses outside 2xx by status code: what "no non-2xx" is checked against. */
  non2xx: Record<string, number>;
  /** Connection errors and timeouts (no response at all). */
  errors: number;
  timeouts: number;
  byKind: Partial<Record<RequestKind, KindStats>>;
  /** SHARDS and WORKERS of a self-started server. */
  server: { shards: number; workers: number } | null;
  /** Cores used by the load generator, the server and the rest of the machine during the run. */
  cpu: CpuShare | null;
};

export type RunMeta = Pick<RunSummary, "label" | "target" | "connections" | "server" | "cpu">;

const perSecond = (count: number, seconds: number) =>
  seconds > 0 ? Math.round((count / seconds) * 10) / 10 : 0;

/** Folds autocannon's result and the per-request recorder into one summary. */
export function summarize(result: autocannon.Result, recorder: ResponseRecorder, meta: RunMeta): RunSummary {
  const byKind = recorder.byKind();
  const statuses: Record<string, number> = {};
  let requests = 0;
  let items = 0;
  let matched = 0;
  for (const stats of Object.values(byKind)) {
    requests += stats.requests;
    items += stats.items;
    matched += stats.matched;
    for (const [status, count] of Object.entries(stats.statuses))
      statuses[status] = (statuses[status] ?? 0) + count;
  }
  const okBatches = Object.entries(byKind.media?.statuses ?? {})
    .filter(([status]) => status.startsWith("2"))
    .reduce((sum, [, count]) => sum + count, 0);
  const seconds = result.duration;
  return {
    ...meta,
    durationSeconds: seconds,
    requests,
    requestsPerSecond: perSecond(requests, seconds),
    batchesPerSecond: perSecond(okBatches, seconds),
    itemsPerSecond: perSecond(items, seconds),
    matchedPerSecond: perSecond(matched, seconds),
    latency: recorder.latency(),
    statuses,
    non2xx: Object.fromEntries(Object.entries(statuses).filter(([status]) => !status.startsWith("2"))),
    errors: result.errors,
    timeouts: result.timeouts,
    byKind,
  };
}

/** The rows of the printed table: one per run, throughput, latency and every failure by kind. */
export function tableRows(runs: readonly RunSummary[]): Record<string, string | number>[] {
  return runs.map((run) => ({
    run: run.label,
    conn: run.connections,
    "req/s": run.requestsPerSecond,
    "items/s": run.itemsPerSecond,
    "p50 ms": run.latency.p50,
    "p95 ms": run.latency.p95,
    "p99 ms": run.latency.p99,
    errors: run.errors,
    "non-2xx": formatCounts(run.non2xx),
    "cores gen/srv/pg/rest": run.cpu
      ? `${run.cpu.generator}/${run.cpu.server ?? "?"}/${run.cpu.postgres}/${run.cpu.rest}`
      : "-",
    "srv thread run/wait %": run.cpu?.serverThread
      ? `${run.cpu.serverThread.running}/${run.cpu.serverThread.waiting}`
      : "-",
  }));
}

/** Per-kind rows, for scenarios that mix calls. */
export function kindRows(run: RunSummary): Record<string, string | number>[] {
  return Object.entries(run.byKind).map(([kind, stats]) => ({
    kind,
    requests: stats.requests,
    "req/s": perSecond(stats.requests, run.durationSeconds),
    "p50 ms": stats.latency.p50,
    "p95 ms": stats.latency.p95,
    "p99 ms": stats.latency.p99,
    statuses: formatCounts(stats.statuses),
  }));
}

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? "-" : entries.map(([status, count]) => `${status}x${count}`).join(" ");
}
