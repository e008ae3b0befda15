import { sql } from "drizzle-orm";
import type { Store } from "../db.ts";

/** Where the stored catalog stands: what metrics read at every scrape, without counting the catalog. */
export type CatalogProgress = {
  version: number;
  /** When the last import committed, changed or not; null before the first. */
  importedAt: Date | null;
  /** Events an import corrected whose kept items are still to be placed again. */
  pendingCorrections: number;
};

/** The catalog as an operator inspects it (contract §15): `catalog status` and `cli status`. */
export type CatalogHealth = CatalogProgress & { venues: number; events: number };

type ProgressRow = { version: string | number | null; imported_at: Date | string | null; pending: number };

export async function readCatalogProgress(store: Store): Promise<CatalogProgress> {
  const [row] = await store.rows<ProgressRow>(sql`select
    (select version from catalog_state where id = 1) as version,
    (select imported_at from catalog_state where id = 1) as imported_at,
    (select count(*) from catalog_corrections)::int as pending`);
  return {
    version: Number(row?.version ?? 0),
    importedAt: row?.imported_at == null ? null : new Date(row.imported_at),
    pendingCorrections: row?.pending ?? 0,
  };
}

/** The progress and the catalog's size: one pass over the events, so for commands, not for scrapes. */
export async function readCatalogHealth(store: Store): Promise<CatalogHealth> {
  const [progress, [counts]] = await Promise.all([
    readCatalogProgress(store),
    store.rows<{ venues: number; events: number }>(sql`select
      (select count(*) from venues)::int as venues,
      (select count(*) from events)::int as events`),
  ]);
  return { ...progress, venues: counts?.venues ?? 0, events: counts?.events ?? 0 };
}
