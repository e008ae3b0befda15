import type { RequestKind } from "../drive/recorder.ts";
import type { Marks } from "./restartChart.ts";
import { isOk, perSecond, rateBetween, recovery, type Sample, type Second, secondsWith } from "./timeline.ts";

/** What a run through a PostgreSQL restart showed, as printed and written to JSON. */
export type RestartFindings = {
  marks: Marks;
  /** How long `pg_ctl restart -m fast` took. */
  restartTookMs: number;
  /** Seconds of the run with at least one 5xx, and with at least one other error. */
  secondsWith5xx: number;
  secondsWithOtherErrors: number;
  /** From the restart issued, and from the cluster back, until every route answered 200 again. */
  recoveryMs: number | null;
  recoveryAfterBackMs: number | null;
  /** Rates of 2xx answers per kind before the restart and after the recovery (the rest of the run). */
  before: Partial<Record<RequestKind, { perSecond: number; itemsPerSecond: number }>>;
  after: Partial<Record<RequestKind, { perSecond: number; itemsPerSecond: number }>>;
  /** Every request of the run by kind and outcome, in flight at its end included. */
  totals: Partial<
    Record<RequestKind, { requests: number; ok: number; serverErrors: number; otherErrors: number }>
  >;
  /** Requests that ended before the restart without a 2xx: the run was not clean before the fault. */
  failuresBeforeRestart: number;
  seconds: Second[];
};

const round = (ms: number) => Math.round(ms);

export function restartFindings(
  samples: readonly Sample[],
  durationSeconds: number,
  marks: Marks,
): RestartFindings {
  const seconds = perSecond(samples, durationSeconds);
  const recovered = recovery(samples, marks.restartMs);
  const kinds = [...new Set(samples.map((sample) => sample.kind))];
  const rates = (fromMs: number, toMs: number) =>
    Object.fromEntries(kinds.map((kind) => [kind, rateBetween(samples, kind, fromMs, toMs)]));
  const totals: RestartFindings["totals"] = {};
  for (const kind of kinds) {
    const ofKind = samples.filter((sample) => sample.kind === kind);
    const serverErrors = ofKind.filter((sample) => sample.status !== null && sample.status >= 500).length;
    const ok = ofKind.filter((sample) => isOk(sample.status)).length;
    totals[kind] = {
      requests: ofKind.length,
      ok,
      serverErrors,
      otherErrors: ofKind.length - ok - serverErrors,
    };
  }
  const endMs = durationSeconds * 1000;
  const recoveredMs = recovered.recoveredMs;
  return {
    marks: { ...marks, recoveredMs },
    restartTookMs: round(marks.backMs - marks.restartMs),
    secondsWith5xx: secondsWith(seconds, (tally) => tally.serverErrors),
    secondsWithOtherErrors: secondsWith(seconds, (tally) => tally.noAnswer + tally.otherStatuses),
    recoveryMs: recoveredMs === null ? null : round(recoveredMs - marks.restartMs),
    recoveryAfterBackMs: recoveredMs === null ? null : round(Math.max(0, recoveredMs - marks.backMs)),
    before: rates(0, marks.restartMs),
    after: recoveredMs === null || recoveredMs >= endMs ? {} : rates(recoveredMs, endMs),
    totals,
    failuresBeforeRestart: samples.filter((sample) => sample.doneMs < marks.restartMs && !isOk(sample.status))
      .length,
    seconds,
  };
}

const KIND_LABELS: Partial<Record<RequestKind, string>> = {
  media: "ingest batches",
  events: "history pages",
  stats: "stats",
};

/** The summary a reader wants first: how long it hurt, and whether it healed. */
export function findingsLines(findings: RestartFindings, processStayedUp: boolean): string[] {
  const rate = (rates: RestartFindings["before"]) =>
    Object.entries(rates)
      .map(([kind, { perSecond, itemsPerSecond }]) => {
        const items = kind === "media" ? ` (${itemsPerSecond} items/s)` : "";
        return `${KIND_LABELS[kind as RequestKind] ?? kind} ${perSecond}/s${items}`;
      })
      .join(", ");
  const recovered =
    findings.recoveryMs === null
      ? "NOT all routes answered 200 again before the run ended"
      : `all routes answered 200 again ${findings.recoveryMs} ms after the restart was issued, ` +
        `${findings.recoveryAfterBackMs} ms after PostgreSQL was back`;
  return [
    `before the restart: ${rate(findings.before) || "nothing answered"}`,
    `pg_ctl restart -m fast took ${findings.restartTookMs} ms`,
    `seconds with 5xx: ${findings.secondsWith5xx}; with other errors (no answer, other statuses): ${findings.secondsWithOtherErrors}`,
    ...Object.entries(findings.totals).map(
      ([kind, t]) =>
        `  ${KIND_LABELS[kind as RequestKind] ?? kind}: ${t.requests} requests, ${t.ok} 2xx, ${t.serverErrors} 5xx, ${t.otherErrors} other errors`,
    ),
    recovered,
    `after the recovery: ${rate(findings.after) || "-"}`,
    processStayedUp ? "the rollcall process stayed up throughout" : "the rollcall process DID NOT stay up",
  ];
}

/** What makes the run fail (exit 1): the process gone, no recovery, or failures the restart did not cause. */
export function restartProblems(findings: RestartFindings, processStayedUp: boolean): string[] {
  const problems: string[] = [];
  if (!processStayedUp) problems.push("the rollcall process exited or stopped answering /livez");
  if (findings.recoveryMs === null) problems.push("not every route answered 200 again within the run");
  if (findings.failuresBeforeRestart > 0)
    problems.push(`requests that failed before the restart: ${findings.failuresBeforeRestart}`);
  const otherStatuses = findings.seconds.reduce((sum, second) => sum + second.total.otherStatuses, 0);
  if (otherStatuses > 0) problems.push(`${otherStatuses} answers were neither 2xx nor 5xx`);
  return problems;
}
