import { sql } from "drizzle-orm";
import type { Store } from "./store.ts";

/** The catalog as `cli status` reports it: its version (0 before the first import), size and last import. */
export type CatalogSummary = { version: string; events: number; venues: number; importedAt: Date | null };

/** Partners, and the keys that still work, by environment. */
export type PartnerSummary = { partners: number; activeKeys: { production: number; sandbox: number } };

export async function catalogSummary(store: Store): Promise<CatalogSummary> {
  const [row] = await store.rows<{
    version: string;
    events: number;
    venues: number;
    imported_at: Date | string | null;
  }>(sql`select coalesce((select version::text from catalog_state where id = 1), '0') as version,
    (select count(*)::int from events) as events,
    (select count(*)::int from venues) as venues,
    (select updated_at from catalog_state where id = 1) as imported_at`);
  const importedAt = row?.imported_at ?? null;
  return {
    version: row?.version ?? "0",
    events: row?.events ?? 0,
    venues: row?.venues ?? 0,
    importedAt: importedAt === null ? null : new Date(importedAt),
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
