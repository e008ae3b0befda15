import { sql } from "drizzle-orm";
import type { Store } from "../db.ts";

/** The catalog as an operator watches it (contract §15): `catalog status`, metrics, /readyz. */
export type CatalogHealth = {
  version: number;
  /** When the last import committed, changed or not; null before the first. */
  importedAt: Date | null;
  venues: number;
  events: number;
  /** Events an import corrected whose kept items are still to be placed again. */
  pendingCorrections: number;
};

type HealthRow = {
  version: string | number | null;
  imported_at: Date | string | null;
  venues: number;
  events: number;
  pending: number;
};

export async function readCatalogHealth(store: Store): Promise<CatalogHealth> {
  const [row] = await store.rows<HealthRow>(sql`select
    (select version from catalog_state where id = 1) as version,
    (select imported_at from catalog_state where id = 1) as imported_at,
    (select count(*) from venues)::int as venues,
    (select count(*) from events)::int as events,
    (select count(*) from catalog_corrections)::int as pending`);
  return {
    version: Number(row?.version ?? 0),
    importedAt: row?.imported_at == null ? null : new Date(row.imported_at),
    venues: row?.venues ?? 0,
    events: row?.events ?? 0,
    pendingCorrections: row?.pending ?? 0,
  };
}
