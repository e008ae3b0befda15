import { eq } from "drizzle-orm";
import type { Store } from "../store/db.ts";
import { getPartner } from "../store/keys.ts";
import { partners } from "../store/schema/partners.ts";
import type { Budget, Clock } from "./budgets.ts";

/** A partner's own limits per budget; null falls back to the service default (RATE_LIMIT_*). */
export type LimitOverrides = Record<Budget, number | null>;

export const NO_OVERRIDES: LimitOverrides = Object.freeze({ ingest: null, read: null, write: null });

/** The partner's overrides, or null when there is no such partner. */
export async function readPartnerLimits(store: Store, partnerId: string): Promise<LimitOverrides | null> {
  const partner = await getPartner(store, partnerId);
  if (partner === null) return null;
  return { ingest: partner.ingestLimit, read: partner.readLimit, write: partner.writeLimit };
}

/**
 * Sets the given budgets' overrides (null clears one; a budget left out keeps its value) and returns the
 * partner's overrides after the change, or null when there is no such partner.
 */
export async function setPartnerLimits(
  store: Store,
  partnerId: string,
  changes: Partial<LimitOverrides>,
): Promise<LimitOverrides | null> {
  const columns = {
    ...(changes.ingest !== undefined && { ingestLimit: changes.ingest }),
    ...(changes.read !== undefined && { readLimit: changes.read }),
    ...(changes.write !== undefined && { writeLimit: changes.write }),
  };
  if (Object.keys(columns).length === 0) return readPartnerLimits(store, partnerId);
  const [row] = await store.db
    .update(partners)
    .set(columns)
    .where(eq(partners.id, partnerId))
    .returning({ ingest: partners.ingestLimit, read: partners.readLimit, write: partners.writeLimit });
  return row === undefined ? null : { ingest: row.ingest, read: row.read, write: row.write };
}

/**
 * How long a partner's overrides are trusted. An operator's change reaches every running instance within
 * this long, while the hot path reads the database once per partner per TTL instead of per request.
 */
export const OVERRIDES_TTL_MS = 2_000;

export type OverrideCache = (partnerId: string) => Promise<LimitOverrides>;

/**
 * Caches each partner's overrides for OVERRIDES_TTL_MS of `now` (the limiter's clock, so a test that
 * drives time also drives expiry). Concurrent misses share one query. Entries are per partner that
 * passed authentication, so the map is bounded by the partners that exist.
 */
export function createOverrideCache(store: Store, now: Clock): OverrideCache {
  const cache = new Map<string, { value: Promise<LimitOverrides>; expiresAt: number }>();
  return (partnerId) => {
    const at = now();
    const cached = cache.get(partnerId);
    if (cached !== undefined && cached.expiresAt > at) return cached.value;
    const value = readPartnerLimits(store, partnerId).then((overrides) => overrides ?? NO_OVERRIDES);
    cache.set(partnerId, { value, expiresAt: at + OVERRIDES_TTL_MS });
    // A failed read is not cached: the next request asks the database again.
    value.catch(() => {
      if (cache.get(partnerId)?.value === value) cache.delete(partnerId);
    });
    return value;
  };
}
