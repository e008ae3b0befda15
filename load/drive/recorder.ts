import { build, type Histogram } from "hdr-histogram-js";

/** The partner calls a workload sends; each is reported on its own as well as in the total. */
export type RequestKind = "media" | "events" | "stats" | "users" | "sync" | "delete" | "erase";

/** Latency percentiles in milliseconds. */
export type Latency = { p50: number; p95: number; p99: number; max: number; mean: number };

/** What one kind of request did during a run. */
export type KindStats = {
  requests: number;
  /** Media items carried by 2xx media batches. */
  items: number;
  /** Items the 2xx batch responses reported as matched. */
  matched: number;
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  latency: Latency;
};

/** Microsecond resolution up to a minute, three significant digits: what HdrHistogram is made for. */
function newHistogram(): Histogram {
  return build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

function latencyOf(histogram: Histogram): Latency {
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    p50: ms(histogram.getValueAtPercentile(50)),
    p95: ms(histogram.getValueAtPercentile(95)),
    p99: ms(histogram.getValueAtPercentile(99)),
    max: ms(histogram.maxValue),
    mean: ms(histogram.mean),
  };
}

type Tally = { histogram: Histogram; items: number; matched: number; statuses: Map<number, number> };

/**
 * Collects every response of a run: latency per kind and overall, items and matches of accepted batches,
 * and a count per status code, so a 429 is told apart from a 500 in the report.
 */
export class ResponseRecorder {
  private readonly overall = newHistogram();
  private readonly tallies = new Map<RequestKind, Tally>();

  record(kind: RequestKind, status: number, latencyMs: number, items: number, matched: number): void {
    let tally = this.tallies.get(kind);
    if (!tally) {
      tally = { histogram: newHistogram(), items: 0, matched: 0, statuses: new Map() };
      this.tallies.set(kind, tally);
    }
    const us = Math.max(1, Math.min(60_000_000, Math.round(latencyMs * 1000)));
    tally.histogram.recordValue(us);
    this.overall.recordValue(us);
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    if (status >= 200 && status < 300) {
      tally.items += items;
      tally.matched += matched;
    }
  }

  latency(): Latency {
    return latencyOf(this.overall);
  }

  byKind(): Partial<Record<RequestKind, KindStats>> {
    const result: Partial<Record<RequestKind, KindStats>> = {};
    for (const [kind, tally] of this.tallies) {
      result[kind] = {
        requests: tally.histogram.totalCount,
        items: tally.items,
        matched: tally.matched,
        statuses: Object.fromEntries([...tally.statuses].sort(([a], [b]) => a - b)),
        latency: latencyOf(tally.histogram),
      };
    }
    return result;
  }
}
