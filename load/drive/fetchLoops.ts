import type { Sample } from "../report/timeline.ts";
import type { Workload } from "./cannon.ts";

/**
 * Clients that record every request with its send and end times, where autocannon keeps only totals: a
 * fault's effect is read second by second, and a request that got no answer at all must be told apart,
 * by kind, from one answered 500.
 */

export type LoopOptions = {
  /** Server root, `http://127.0.0.1:PORT`. */
  baseUrl: string;
  key: string;
  /** One client per entry, each sending one request after another from its workload. */
  clients: readonly Workload[];
  durationMs: number;
  /** No request waits longer: past the service's own 8 s deadline and the runtime's 10 s idle timeout. */
  requestTimeoutMs: number;
};

export type Loops = {
  /** performance.now() at the run's start: samples count their times from it. */
  readonly startedAt: number;
  /** Resolves once every client has sent its last request and had its answer or its timeout. */
  readonly done: Promise<Sample[]>;
};

/** A client that failed waits this long before its next request, as a partner's backend backs off. */
const PAUSE_AFTER_FAILURE_MS = 50;
/** However long a run is asked for, no client sends more than this. */
const MAX_REQUESTS_PER_CLIENT = 1_000_000;

/** Starts the clients now; they stop sending once `durationMs` has passed. */
export function startLoops(options: LoopOptions): Loops {
  const startedAt = performance.now();
  const endsAt = startedAt + options.durationMs;
  const samples: Sample[] = [];
  const getHeaders = { "x-partner-api-key": options.key };
  const postHeaders = { ...getHeaders, "content-type": "application/json" };
  const client = async (workload: Workload) => {
    for (let n = 0; n < MAX_REQUESTS_PER_CLIENT && performance.now() < endsAt; n++) {
      const planned = workload.next();
      const sentAt = performance.now();
      let status: number | null = null;
      let body = "";
      try {
        const response = await fetch(options.baseUrl + planned.path, {
          method: planned.method,
          headers: planned.body ? postHeaders : getHeaders,
          body: planned.body ?? undefined,
          signal: AbortSignal.timeout(options.requestTimeoutMs),
        });
        body = await response.text();
        status = response.status;
      } catch {
        // Refused, reset, or timed out: recorded as no answer.
      }
      const doneAt = performance.now();
      samples.push({
        kind: planned.kind,
        sentMs: sentAt - startedAt,
        doneMs: doneAt - startedAt,
        status,
        items: planned.items,
      });
      if (status !== null) workload.onResponse?.(planned, status, body);
      if (status === null || status >= 300) await Bun.sleep(PAUSE_AFTER_FAILURE_MS);
    }
  };
  const done = Promise.all(options.clients.map(client)).then(() =>
    samples.sort((a, b) => a.sentMs - b.sentMs),
  );
  return { startedAt, done };
}
