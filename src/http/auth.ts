import type { Environment } from "../config.ts";
import type { Store } from "../store/db.ts";
import { findActiveKey, hashKey, parsePresentedKey } from "../store/keys.ts";
import { ApiError } from "./errors.ts";

export type Partner = {
  partnerId: string;
  keyId: string;
  environment: Environment;
};

/**
 * How long a key lookup is trusted. docs/api.md §10 wants a revocation honoured within 5 seconds on every
 * instance; 2 seconds keeps well inside that while sparing the database one query per request.
 */
const CACHE_TTL_MS = 2_000;
/** Bounds the cache so a flood of distinct bogus keys cannot grow memory without limit. */
const CACHE_MAX_ENTRIES = 10_000;

/** One answer for every kind of bad key (docs/api.md §2 step 3): the response tells an attacker nothing. */
export const invalidKey = () =>
  new ApiError("invalid_api_key", "The X-PARTNER-API-KEY header is missing or the key is not valid here.");

export type Authenticator = (presented: string | null) => Promise<Partner>;

export function createAuthenticator(store: Store, environment: Environment): Authenticator {
  const cache = new Map<string, { partner: Partner | null; expiresAt: number }>();

  async function lookup(presented: string): Promise<Partner | null> {
    const row = await findActiveKey(store, presented);
    if (row === null || row.environment !== environment) return null;
    return { partnerId: row.partnerId, keyId: row.id, environment: row.environment };
  }

  return async (presented) => {
    if (presented === null || parsePresentedKey(presented) === null) throw invalidKey();
    const hash = hashKey(presented);
    const now = Date.now();
    const cached = cache.get(hash);
    let partner: Partner | null;
    if (cached && cached.expiresAt > now) {
      partner = cached.partner;
    } else {
      partner = await lookup(presented);
      if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
      cache.set(hash, { partner, expiresAt: now + CACHE_TTL_MS });
    }
    if (partner === null) throw invalidKey();
    return partner;
  };
}
