import { and, eq } from "drizzle-orm";
import type { Store } from "./db.ts";
import { type UserAddress, users } from "./schema/index.ts";

export type UserRow = typeof users.$inferSelect;

/** A user as seen by one partner: another partner's user is indistinguishable from none (docs/api.md §2). */
export async function findUserForPartner(
  store: Store,
  partnerId: string,
  userId: string,
): Promise<UserRow | null> {
  const [row] = await store.db
    .select()
    .from(users)
    .where(and(eq(users.id, userId), eq(users.partnerId, partnerId)))
    .limit(1);
  return row ?? null;
}

/** A validated creation request; absent optional fields are null. */
export type NewUser = {
  /** Already trimmed. */
  email: string;
  partnerUserId: string | null;
  firstName: string | null;
  lastName: string | null;
  phoneNumber: string | null;
  address: UserAddress | null;
};

export type CreatedUser = { id: string; createdAt: Date; created: boolean };

const created = { id: users.id, createdAt: users.createdAt };

/**
 * The idempotency key of creation (docs/api.md §3): the trimmed email, lowercased, in Unicode
 * normalization form C, so an address typed with a composed `ü` and one with `u` and a combining
 * diaeresis are one user.
 */
export function emailKeyOf(email: string): string {
  return email.normalize("NFC").toLowerCase();
}

async function findByEmailKey(store: Store, partnerId: string, emailKey: string) {
  const [row] = await store.db
    .select(created)
    .from(users)
    .where(and(eq(users.partnerId, partnerId), eq(users.emailKey, emailKey)));
  return row;
}

/**
 * Creates the partner's user for this email, or returns the one that exists, unchanged.
 *
 * Race-free without locks or retries on errors: the first insert arbitrates on every unique index, so
 * a concurrent insert of the same email or the same phone makes it a no-op instead of a failure (it
 * waits for the other transaction, then sees its row). A no-op that was not about the email can only
 * have been the phone, which is then dropped (docs/api.md §3: a taken phone never fails the call), and the
 * second insert arbitrates on the email alone.
 */
export async function createUser(store: Store, partnerId: string, input: NewUser): Promise<CreatedUser> {
  const emailKey = emailKeyOf(input.email);
  const values = {
    partnerId,
    email: input.email,
    emailKey,
    partnerUserId: input.partnerUserId,
    firstName: input.firstName,
    lastName: input.lastName,
    phoneNumber: input.phoneNumber,
    address: input.address,
  };
  const [inserted] = await store.db.insert(users).values(values).onConflictDoNothing().returning(created);
  if (inserted) return { ...inserted, created: true };
  const existing = await findByEmailKey(store, partnerId, emailKey);
  if (existing) return { ...existing, created: false };
  const [withoutPhone] = await store.db
    .insert(users)
    .values({ ...values, phoneNumber: null })
    .onConflictDoNothing({ target: [users.partnerId, users.emailKey] })
    .returning(created);
  if (withoutPhone) return { ...withoutPhone, created: true };
  const raced = await findByEmailKey(store, partnerId, emailKey);
  if (!raced) throw new Error("user creation conflicted on the email but no user holds it");
  return { ...raced, created: false };
}
