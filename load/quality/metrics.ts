/**
 * Precision and recall of attended events, unranked (everything the history shows) and ranked by a
 * confidence: precision at a recall, and the area under the precision-recall curve (average
 * precision). Recall is over every true attendance, so attendances the rule never finds cap it.
 */

/** One event in one user's history: its confidence and whether the user was there. */
export type Scored = { score: number; correct: boolean };

export type Counts = { truth: number; shown: number; correct: number };

export type RankedMetrics = {
  /** Best precision among the thresholds that keep at least this recall; null when no threshold does. */
  precisionAt90: number | null;
  precisionAt95: number | null;
  averagePrecision: number;
  /** (recall, precision, events shown) at each distinct confidence (threshold), highest first. */
  curve: { recall: number; precision: number; threshold: number; shown: number }[];
};

export const precision = (c: Counts) => (c.shown === 0 ? 1 : c.correct / c.shown);
export const recall = (c: Counts) => (c.truth === 0 ? 1 : c.correct / c.truth);

/**
 * Thresholds only fall between distinct confidences: events with equal confidence are shown or left
 * out together, as a min_confidence filter would.
 */
export function ranked(pairs: readonly Scored[], truth: number): RankedMetrics {
  const sorted = [...pairs].sort((a, b) => b.score - a.score);
  const curve: RankedMetrics["curve"] = [];
  let shown = 0;
  let correct = 0;
  let averagePrecision = 0;
  let lastRecall = 0;
  for (let i = 0; i < sorted.length; ) {
    const threshold = (sorted[i] as Scored).score;
    while (i < sorted.length && (sorted[i] as Scored).score === threshold) {
      shown++;
      if ((sorted[i] as Scored).correct) correct++;
      i++;
    }
    const r = truth === 0 ? 1 : correct / truth;
    const p = correct / shown;
    averagePrecision += (r - lastRecall) * p;
    lastRecall = r;
    curve.push({ recall: r, precision: p, threshold, shown });
  }
  const at = (target: number) => {
    let bestPrecision: number | null = null;
    for (const point of curve) {
      if (point.recall >= target - 1e-12) bestPrecision = Math.max(bestPrecision ?? 0, point.precision);
    }
    return bestPrecision;
  };
  return { precisionAt90: at(0.9), precisionAt95: at(0.95), averagePrecision, curve };
}

/** The threshold a min_confidence filter would need for `target` recall: the highest that reaches it. */
export function thresholdFor(metrics: RankedMetrics, target: number): number | null {
  for (const point of metrics.curve) if (point.recall >= target - 1e-12) return point.threshold;
  return null;
}

/** At most `points` points of a curve, always keeping its last one, for a chart. */
export function thin<T>(curve: readonly T[], points: number): T[] {
  if (curve.length <= points) return [...curve];
  const step = curve.length / points;
  const kept: T[] = [];
  for (let i = 0; i < points; i++) kept.push(curve[Math.floor(i * step)] as T);
  kept.push(curve[curve.length - 1] as T);
  return kept;
}

/**
 * Precision, recall and the number of events shown at or above a confidence threshold (a min_confidence
 * filter).
 */
export function atThreshold(
  metrics: RankedMetrics,
  threshold: number,
): { precision: number; recall: number; shown: number } {
  const point = metrics.curve.filter((c) => c.threshold >= threshold).at(-1);
  return point === undefined
    ? { precision: 1, recall: 0, shown: 0 }
    : { precision: point.precision, recall: point.recall, shown: point.shown };
}
