import { describe, expect, test } from "bun:test";
import { ranked, thresholdFor } from "../load/quality/metrics.ts";

/** The quality benchmark's ranked measures, on lists small enough to count by hand. */
describe("ranked precision and recall", () => {
  test("precision at a recall is the best precision among thresholds that reach it", () => {
    // 10 true events, 9 of them found; one false event ranked fourth.
    const order = [true, true, true, false, true, true, true, true, true, true];
    const pairs = order.map((correct, i) => ({ score: 100 - i, correct }));
    const metrics = ranked(pairs, 10);
    // Recall 0.9 takes all ten shown (9 correct); the tenth true event is never shown, so 0.95 is out of reach.
    expect(metrics.precisionAt90).toBeCloseTo(9 / 10);
    expect(metrics.precisionAt95).toBeNull();
    expect(thresholdFor(metrics, 0.9)).toBe(91);
    // Average precision: sum over correct pairs of the precision at their rank, over all true events.
    const expected = (1 + 1 + 1 + 4 / 5 + 5 / 6 + 6 / 7 + 7 / 8 + 8 / 9 + 9 / 10) / 10;
    expect(metrics.averagePrecision).toBeCloseTo(expected);
  });

  test("equal confidences are shown or left out together", () => {
    const pairs = [
      { score: 2, correct: true },
      { score: 1, correct: true },
      { score: 1, correct: false },
      { score: 1, correct: false },
    ];
    const metrics = ranked(pairs, 2);
    expect(metrics.curve).toEqual([
      { recall: 0.5, precision: 1, threshold: 2, shown: 1 },
      { recall: 1, precision: 0.5, threshold: 1, shown: 4 },
    ]);
    expect(metrics.precisionAt95).toBe(0.5);
    expect(metrics.averagePrecision).toBeCloseTo(0.5 * 1 + 0.5 * 0.5);
  });
});
