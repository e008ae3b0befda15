import type { RunSummary } from "./summary.ts";

/** Core counts the model projects to: common sizes of one server host (and of its database host). */
const MODEL_CORES = [4, 8, 16, 32] as const;

export type ScaleRow = {
  cores: number;
  /** What the server's request threads could serve on `cores`, at the measured CPU per request. */
  serverBound: number;
  /** What PostgreSQL could serve on a machine of its own with `cores`. */
  postgresBound: number;
  /** The lower of the two: what one instance would reach. */
  perSecond: number;
  bound: "server" | "postgres";
};

export type ScaleModel = {
  /** Milliseconds of CPU one request (a batch, on ingest runs) costs the server and PostgreSQL. */
  serverCpuMs: number;
  postgresCpuMs: number;
  rows: ScaleRow[];
};

/**
 * What one instance would reach on bigger machines, from what one run measured: the CPU a request
 * cost the server process (every thread) and PostgreSQL's backends, divided into the cores each would
 * have, with PostgreSQL on a machine of its own. It assumes both scale linearly with cores (the server
 * does by request threads, which share nothing a request waits on but the rate limiter of the memory
 * store; PostgreSQL until its commits' WAL flushes or locks bind), so it is an upper bound to measure
 * against, not a promise. Null when the run lacks the CPU figures or served nothing.
 */
export function scaleModel(run: RunSummary, cores: readonly number[] = MODEL_CORES): ScaleModel | null {
  const served = run.batchesPerSecond > 0 ? run.batchesPerSecond : run.requestsPerSecond;
  if (run.cpu === null || run.cpu.server === null || served <= 0) return null;
  const serverCpu = run.cpu.server / served;
  const postgresCpu = run.cpu.postgres / served;
  if (serverCpu <= 0 || postgresCpu <= 0) return null;
  const rows = cores.map((count): ScaleRow => {
    const serverBound = Math.round(count / serverCpu);
    const postgresBound = Math.round(count / postgresCpu);
    return {
      cores: count,
      serverBound,
      postgresBound,
      perSecond: Math.min(serverBound, postgresBound),
      bound: serverBound <= postgresBound ? "server" : "postgres",
    };
  });
  return {
    serverCpuMs: Math.round(serverCpu * 1e6) / 1e3,
    postgresCpuMs: Math.round(postgresCpu * 1e6) / 1e3,
    rows,
  };
}

/** The model as printed under a run's table. */
export function describeModel(label: string, model: ScaleModel): string[] {
  return [
    `${label}: ${model.serverCpuMs} ms of server CPU and ${model.postgresCpuMs} ms of PostgreSQL CPU a request;` +
      " one instance with PostgreSQL on its own machine of as many cores, if both scale linearly:",
    ...model.rows.map(
      (row) =>
        `  ${row.cores} cores: ${row.perSecond}/s (${row.bound} bound; server ${row.serverBound}/s, PostgreSQL ${row.postgresBound}/s)`,
    ),
  ];
}
