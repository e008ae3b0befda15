import { sql } from "drizzle-orm";
import { readCatalogHealth } from "./catalog/catalogHealth.ts";
import type { Store } from "./store.ts";

/** The catalog as `cli status` reports it: its version (0 before the first import), size and last import. */
export type CatalogSummary = { version: string; events: number; venues: number; importedAt: Date | null };

/** Partners, and the keys that still work, by environment. */
export type PartnerSummary = { partners: number; activeKeys: { production: number; sandbox: number } };

export async function catalogSummary(store: Store): Promise<CatalogSummary> {
  const health = await readCatalogHealth(store);
  return {
    version: String(health.version),
    events: health.events,
    venues: health.venues,
    importedAt: health.importedAt,
  };
}

export async function partnerSummary(store: Store): Promise<PartnerSummary> {
  const [row] = await store.rows<{ partners: number; production: number; sandbox: number }>(
    sql`select (select count(*)::int from partners) as partners,
      count(*) filter (where environment = 'production')::int as production,
      count(*) filter (where environment = 'sandbox')::int as sandbox
    from api_keys where revoked_at is null`,
  );
  return {
    partners: row?.partners ?? 0,
    activeKeys: { production: row?.production ?? 0, sandbox: row?.sandbox ?? 0 },
  };
}
