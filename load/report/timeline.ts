import type { RequestKind } from "../drive/recorder.ts";

/**
 * A run told second by second, for a fault in the middle of it: what each kind of request got in each
 * second, and when, after the fault, every kind was answered 200 again. Times are milliseconds from the
 * start of the measured run.
 */

/** One request: `status` is null when no answer came (connection refused or reset, or the timeout). */
export type Sample = {
  kind: RequestKind;
  sentMs: number;
  doneMs: number;
  status: number | null;
  items: number;
};

export type Tally = {
  /** Answered 2xx. */
  ok: number;
  serverErrors: number;
  /** Answered with a status that is neither 2xx nor 5xx (a 4xx would be the load tool's fault). */
  otherStatuses: number;
  noAnswer: number;
  /** p99 of the answers (any status) received in the second; null without any. */
  p99Ms: number | null;
};

export type Second = { second: number; total: Tally; byKind: Partial<Record<RequestKind, Tally>> };

export const isOk = (status: number | null) => status !== null && status >= 200 && status < 300;

/** Nearest-rank percentile (the smallest value at or above `percent` % of them); null for none. */
export function percentile(values: readonly number[], percent: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((percent / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

function tally(samples: readonly Sample[]): Tally {
  const result: Tally = { ok: 0, serverErrors: 0, otherStatuses: 0, noAnswer: 0, p99Ms: null };
  const answered: number[] = [];
  for (const { status, sentMs, doneMs } of samples) {
    if (status === null) result.noAnswer++;
    else if (isOk(status)) result.ok++;
    else if (status >= 500) result.serverErrors++;
    else result.otherStatuses++;
    if (status !== null) answered.push(doneMs - sentMs);
  }
  const p99 = percentile(answered, 99);
  result.p99Ms = p99 === null ? null : Math.round(p99 * 10) / 10;
  return result;
}

/**
 * Requests by the second in which they ended, for seconds 0 to `seconds` - 1: a second's throughput is
 * what was answered in it. Requests that ended after the run (in flight when it stopped) are left out.
 */
export function perSecond(samples: readonly Sample[], seconds: number): Second[] {
  const buckets: Sample[][] = Array.from({ length: seconds }, () => []);
  for (const sample of samples) buckets[Math.floor(sample.doneMs / 1000)]?.push(sample);
  return buckets.map((bucket, second) => {
    const byKind: Partial<Record<RequestKind, Tally>> = {};
    for (const kind of new Set(bucket.map((sample) => sample.kind))) {
      byKind[kind] = tally(bucket.filter((sample) => sample.kind === kind));
    }
    return { second, total: tally(bucket), byKind };
  });
}

export type Recovery = {
  /** Requests that ended at or after the fault without a 2xx. */
  failures: number;
  /** When the last of them was sent. */
  lastFailureSentMs: number | null;
  /**
   * The end of the first 2xx of the last kind to get one among the requests sent after the last
   * failure: from then on every kind had been answered 200 and nothing failed. `sinceMs` when nothing
   * failed; null when some kind got no 2xx after the last failure (not recovered within the run).
   */
  recoveredMs: number | null;
};

/** When every kind of request was answered 200 again after a fault at `sinceMs`. */
export function recovery(samples: readonly Sample[], sinceMs: number): Recovery {
  const affected = samples.filter((sample) => sample.doneMs >= sinceMs);
  const failed = affected.filter((sample) => !isOk(sample.status));
  if (failed.length === 0) return { failures: 0, lastFailureSentMs: null, recoveredMs: sinceMs };
  const lastFailureSentMs = Math.max(...failed.map((sample) => sample.sentMs));
  let recoveredMs: number | null = 0;
  for (const kind of new Set(samples.map((sample) => sample.kind))) {
    const firstOk = affected
      .filter((sample) => sample.kind === kind && sample.sentMs > lastFailureSentMs && isOk(sample.status))
      .reduce<number | null>((first, sample) => Math.min(first ?? sample.doneMs, sample.doneMs), null);
    recoveredMs = firstOk === null || recoveredMs === null ? null : Math.max(recoveredMs, firstOk);
  }
  return { failures: failed.length, lastFailureSentMs, recoveredMs };
}

/** How many seconds saw at least one request of the outcome `pick` counts. */
export function secondsWith(seconds: readonly Second[], pick: (tally: Tally) => number): number {
  return seconds.filter((second) => pick(second.total) > 0).length;
}

/** 2xx answers of `kind` per second and their items per second, over ends in [fromMs, toMs). */
export function rateBetween(samples: readonly Sample[], kind: RequestKind, fromMs: number, toMs: number) {
  const ok = samples.filter(
    (sample) =>
      sample.kind === kind && isOk(sample.status) && sample.doneMs >= fromMs && sample.doneMs < toMs,
  );
  const seconds = Math.max(0.001, (toMs - fromMs) / 1000);
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    perSecond: round(ok.length / seconds),
    itemsPerSecond: round(ok.reduce((sum, sample) => sum + sample.items, 0) / seconds),
  };
}
