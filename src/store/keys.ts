import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Store } from "./db.ts";
import { apiKeys, partners } from "./schema/index.ts";

/**
 * Partners and their API keys (docs/api.md §10). A key is `<partner_id>-<secret>`; the secret is 32 random
 * bytes, so a plain SHA-256 of the whole key is safe to store and to look up by: there is nothing to
 * guess that a salt or a slow hash would protect. The key itself is returned once, at issue.
 */

export type PartnerRow = {
  id: string;
  name: string;
  createdAt: Date;
  ingestLimit: number | null;
  readLimit: number | null;
  writeLimit: number | null;
};

export type KeyEnvironment = "production" | "sandbox";

export type KeyRow = {
  id: string;
  partnerId: string;
  environment: KeyEnvironment;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
};

export type PresentedKey = { partnerId: string; secret: string };

export const PARTNER_ID = /^[a-z0-9_]{1,64}$/;

/** 32 random bytes in base64url are 43 characters of `[A-Za-z0-9_-]`, no padding. */
const SECRET_BYTES = 32;
const KEY_SHAPE = /^([a-z0-9_]{1,64})-([A-Za-z0-9_-]{43})$/;
/** Key ids are UUIDs; anything else cannot name a key (and would be a type error in SQL). */
export const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class PartnerExistsError extends Error {
  constructor(readonly partnerId: string) {
    super(`partner ${partnerId} already exists`);
  }
}

export class UnknownPartnerError extends Error {
  constructor(readonly partnerId: string) {
    super(`no partner ${partnerId}`);
  }
}

/** Shape check only: the partner id is what precedes the first hyphen (partner ids have none). */
export function parsePresentedKey(key: string): PresentedKey | null {
  const match = KEY_SHAPE.exec(key);
  if (match === null) return null;
  const [, partnerId, secret] = match;
  if (partnerId === undefined || secret === undefined) return null;
  return { partnerId, secret };
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

const partnerColumns = {
  id: partners.id,
  name: partners.name,
  createdAt: partners.createdAt,
  ingestLimit: partners.ingestLimit,
  readLimit: partners.readLimit,
  writeLimit: partners.writeLimit,
};

const keyColumns = {
  id: apiKeys.id,
  partnerId: apiKeys.partnerId,
  environment: apiKeys.environment,
  label: apiKeys.label,
  createdAt: apiKeys.createdAt,
  revokedAt: apiKeys.revokedAt,
  lastUsedAt: apiKeys.lastUsedAt,
};

export async function createPartner(store: Store, input: { id: string; name: string }): Promise<PartnerRow> {
  if (!PARTNER_ID.test(input.id))
    throw new RangeError(`partner id must match [a-z0-9_]{1,64}, got ${input.id}`);
  const [row] = await store.db
    .insert(partners)
    .values({ id: input.id, name: input.name })
    .onConflictDoNothing({ target: partners.id })
    .returning(partnerColumns);
  if (row === undefined) throw new PartnerExistsError(input.id);
  return row;
}

export async function getPartner(store: Store, id: string): Promise<PartnerRow | null> {
  const [row] = await store.db.select(partnerColumns).from(partners).where(eq(partners.id, id));
  return row ?? null;
}

export async function listPartners(store: Store): Promise<PartnerRow[]> {
  return store.db.select(partnerColumns).from(partners).orderBy(asc(partners.id));
}

export async function issueKey(
  store: Store,
  input: { partnerId: string; environment: KeyEnvironment; label: string | null },
): Promise<{ row: KeyRow; key: string }> {
  if ((await getPartner(store, input.partnerId)) === null) throw new UnknownPartnerError(input.partnerId);
  const key = `${input.partnerId}-${randomBytes(SECRET_BYTES).toString("base64url")}`;
  const [row] = await store.db
    .insert(apiKeys)
    .values({
      partnerId: input.partnerId,
      environment: input.environment,
      label: input.label,
      keyHash: hashKey(key),
    })
    .returning(keyColumns);
  if (row === undefined) throw new Error("inserting the key returned no row");
  return { row, key };
}

export async function listKeys(store: Store, partnerId: string): Promise<KeyRow[]> {
  return store.db
    .select(keyColumns)
    .from(apiKeys)
    .where(eq(apiKeys.partnerId, partnerId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

/** Revoking is idempotent: a key revoked earlier keeps its first revocation time. Returns false for an unknown id. */
export async function revokeKey(store: Store, keyId: string): Promise<boolean> {
  if (!KEY_ID.test(keyId)) return false;
  const revoked = await store.db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(eq(apiKeys.id, keyId))
    .returning({ id: apiKeys.id });
  return revoked.length > 0;
}

/**
 * Marks a key as used now. The authenticator calls it for at most one request a minute per key, outside
 * the request, so `keys list` shows the last use to within a minute at no cost to requests.
 */
export async function recordKeyUse(store: Store, keyId: string): Promise<void> {
  await store.db.update(apiKeys).set({ lastUsedAt: sql`now()` }).where(eq(apiKeys.id, keyId));
}

/**
 * The map lookup already matched the hash; comparing again in constant time keeps the final decision
 * independent of how many leading characters agree, whatever the lookup did.
 */
function confirmed(
  row: { keyHash: string; partnerId: string },
  hash: string,
  presented: PresentedKey,
): boolean {
  if (!timingSafeEqual(Buffer.from(row.keyHash, "hex"), Buffer.from(hash, "hex"))) return false;
  return row.partnerId === presented.partnerId;
}

/** An unrevoked key as the authenticator holds it in memory: no secret, only its hash. */
export type ActiveKey = { id: string; partnerId: string; environment: KeyEnvironment; keyHash: string };

/** Every unrevoked key of one environment, by hash: the table holds a few keys per partner, so all of them fit. */
export async function loadActiveKeys(
  store: Store,
  environment: KeyEnvironment,
): Promise<ReadonlyMap<string, ActiveKey>> {
  const rows = await store.db
    .select({
      id: apiKeys.id,
      partnerId: apiKeys.partnerId,
      environment: apiKeys.environment,
      keyHash: apiKeys.keyHash,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.environment, environment), isNull(apiKeys.revokedAt)));
  return new Map(rows.map((row) => [row.keyHash, row]));
}

/** The active key a presented key is, among those `loadActiveKeys` read, or null: no query. */
export function matchActiveKey(keys: ReadonlyMap<string, ActiveKey>, presentedKey: string): ActiveKey | null {
  const presented = parsePresentedKey(presentedKey);
  if (presented === null) return null;
  const hash = hashKey(presentedKey);
  const key = keys.get(hash);
  if (key === undefined || !confirmed(key, hash, presented)) return null;
  return key;
}
