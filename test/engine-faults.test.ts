import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createMatchingEngine, type MatchingEngine } from "../src/shards/engine.ts";
import { MatchEngineError } from "../src/shards/faults.ts";
import type { MatchQuery, MatchSettings } from "../src/shards/matcher.ts";
import { ReferenceMatcher } from "../src/shards/reference.ts";
import { arrayCatalogSource } from "../src/shards/source.ts";
import { type Catalog, catalogArbitrary, queryArbitrary } from "./shards-arbitraries.ts";

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};

describe("a failing worker is replaced (WORKERS=2)", () => {
  let engine: MatchingEngine;
  let reference: ReferenceMatcher;
  let batch: MatchQuery[];

  beforeAll(async () => {
    const [catalog] = fc.sample(catalogArbitrary(100, 600), { numRuns: 1, seed: 11 }) as [Catalog];
    [batch] = fc.sample(fc.array(queryArbitrary(catalog), { minLength: 200, maxLength: 200 }), {
      numRuns: 1,
      seed: 12,
    }) as [MatchQuery[]];
    reference = new ReferenceMatcher(catalog.venues, catalog.events, SETTINGS);
    engine = await createMatchingEngine(arrayCatalogSource(catalog.venues, catalog.events), {
      settings: SETTINGS,
      shards: 8,
      workers: 2,
      // Short, so the hang cases end quickly; a healthy 200-item task takes well under a millisecond.
      pool: { taskTimeoutMs: 400 },
    });
  });
  afterAll(async () => {
    await engine.close();
  });

  describe.each(["throw", "exit", "hang"] as const)("worker fault: %s", (fault) => {
    test("once: the batch completes on retry with the right answers", async () => {
      engine.injectWorkerFault(fault, 1);
      expect(await engine.match(batch)).toEqual(await reference.match(batch));
    });

    test("twice: the batch fails with MatchEngineError, and the next batches succeed", async () => {
      engine.injectWorkerFault(fault, 2);
      await expect(engine.match(batch)).rejects.toBeInstanceOf(MatchEngineError);
      const expected = await reference.match(batch);
      const next = await Promise.all([engine.match(batch), engine.match(batch), engine.match(batch)]);
      for (const answers of next) expect(answers).toEqual(expected);
    });
  });
});
