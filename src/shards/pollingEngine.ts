import type { Store } from "../store/db.ts";
import { describeFailure } from "../store/failures.ts";
import { createMatchingEngine, type EngineOptions, type MatchingEngine } from "./engine.ts";
import { storeCatalogSource } from "./source.ts";

/** How long a catalog poll may wait on the database before the log says it is stuck. */
const STALLED_POLL_MS = 30_000;

/**
 * The server's engine: reads the catalog from the store and polls catalog_state.version every
 * `pollSeconds`, so an import shows up in matching within one poll plus one build.
 */
export async function startMatchingEngine(
  options: EngineOptions & { store: Store; pollSeconds: number },
): Promise<MatchingEngine> {
  const log = options.log ?? (() => {});
  const engine = await createMatchingEngine(storeCatalogSource(options.store), options);
  // One poll at a time, and one line when polls start failing and one when they succeed again: with
  // the database away, polls that each waited out a connection timeout used to pile up and then
  // fail together, a burst of identical lines every few seconds.
  let polling = false;
  let pollStarted = 0;
  let failing = false;
  const timer = setInterval(() => {
    if (polling) {
      // A poll on a connection the database stopped answering never fails by itself: say so once.
      if (!failing && performance.now() - pollStarted > STALLED_POLL_MS) {
        log("catalog_refresh_failed", {
          error: `waited ${STALLED_POLL_MS / 1000} s for the database`,
          serving: "the previous index",
        });
        failing = true;
      }
      return;
    }
    polling = true;
    pollStarted = performance.now();
    engine
      .refresh()
      .then(() => {
        if (failing) log("catalog_refresh_recovered");
        failing = false;
      })
      .catch((error: unknown) => {
        if (!failing)
          log("catalog_refresh_failed", { ...describeFailure(error), serving: "the previous index" });
        failing = true;
      })
      .finally(() => {
        polling = false;
      });
  }, options.pollSeconds * 1000);
  return {
    match: (queries) => engine.match(queries),
    version: () => engine.version(),
    generation: () => engine.generation(),
    catalog: () => engine.catalog(),
    refresh: () => engine.refresh(),
    openGenerations: () => engine.openGenerations(),
    injectWorkerFault: (fault, tasks) => engine.injectWorkerFault(fault, tasks),
    sharedGeneration: () => engine.sharedGeneration(),
    beforeSwap: (hook) => engine.beforeSwap(hook),
    close: async () => {
      clearInterval(timer);
      await engine.close();
    },
  };
}
