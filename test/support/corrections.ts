import { sql } from "drizzle-orm";
import { CorrectionRunner } from "../../src/flows/corrections/correctionRunner.ts";
import { createMatchingEngine, type MatchingEngine } from "../../src/shards/engine.ts";
import type { MatchSettings } from "../../src/shards/matcher.ts";
import { storeCatalogSource } from "../../src/shards/source.ts";
import { importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import type { Store } from "../../src/store/db.ts";
import { succeeded } from "./catalogImport.ts";

/**
 * A running server's half of a catalog correction, in-process: its own index over the store, refreshed
 * after each import, and the runner that places kept items again once the index holds the import.
 */
export type Corrections = {
  engine: MatchingEngine;
  /** Imports catalog lines, then brings the index up to date (as a server's poll would). */
  importLines(lines: readonly string[]): Promise<{ correctedEvents: number; version: number }>;
  drain(): ReturnType<CorrectionRunner["drain"]>;
  close(): Promise<void>;
};

export async function startCorrections(store: Store, settings: MatchSettings): Promise<Corrections> {
  const catalog = storeCatalogSource(store);
  const engine = await createMatchingEngine(catalog, { settings, shards: 4, workers: 0 });
  const runner = new CorrectionRunner({
    store,
    matcher: engine,
    indexVersion: () => Number(engine.catalog().version),
    catalog,
    settings,
    log: () => {},
  });
  return {
    engine,
    async importLines(lines) {
      const report = succeeded(await importCatalog(store, memoryLines([...lines], 7)));
      await engine.refresh();
      return { correctedEvents: report.correctedEvents, version: report.version };
    },
    drain: () => runner.drain(),
    close: () => engine.close(),
  };
}

/** Each kept item of a user and the event it is kept at, by media id. */
export async function keptPlaces(store: Store, userId: string): Promise<Record<string, number>> {
  const rows = await store.rows<{ media_id: string; event_id: number }>(
    sql`select media_id, event_id from media where user_id = ${userId}::uuid order by media_id`,
  );
  return Object.fromEntries(rows.map((row) => [row.media_id, row.event_id]));
}
