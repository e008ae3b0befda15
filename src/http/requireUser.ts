import type { Store } from "../store/db.ts";
import { findUserForPartner, type UserRow } from "../store/users.ts";
import { ApiError } from "./errors.ts";

/** The one answer for a user the key cannot see, whether it does not exist or is another partner's. */
export const userNotFound = (): ApiError => new ApiError("user_not_found", "No user with this user_id.");

/** docs/api.md §2 step 8: the last check, after the body passed; never reveals another partner's users. */
export async function requireUser(store: Store, partnerId: string, userId: string): Promise<UserRow> {
  const user = await findUserForPartner(store, partnerId, userId);
  if (user === null) throw userNotFound();
  return user;
}
