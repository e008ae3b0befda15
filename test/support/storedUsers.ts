import { sql } from "drizzle-orm";
import type { Store } from "../../src/store/db.ts";

/** A user's row as POST /v1/users left it, read straight from the database. */
export type StoredUser = {
  email: string;
  email_key: string;
  partner_user_id: string | null;
  first_name: string | null;
  last_name: string | null;
  phone_number: string | null;
  address: Record<string, string> | null;
};

export async function storedUser(store: Store, userId: string): Promise<StoredUser | undefined> {
  const [row] = await store.rows<StoredUser>(
    sql`select email, email_key, partner_user_id, first_name, last_name, phone_number, address
        from users where id = ${userId}`,
  );
  return row;
}
