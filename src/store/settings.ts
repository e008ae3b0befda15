import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";

/**
 * The cursor-signing secret shared by every instance on this database: generated once, on first boot,
 * unless CURSOR_SECRET is configured. ON CONFLICT makes concurrent first boots agree on one value.
 */
export async function cursorSecretOf(store: Store, configured: string | null): Promise<string> {
  if (configured !== null) return configured;
  const candidate = randomBytes(32).toString("base64url");
  await store.rows(
    sql`insert into service_settings (name, value) values ('cursor_secret', ${candidate}) on conflict (name) do nothing`,
  );
  const [row] = await store.rows<{ value: string }>(
    sql`select value from service_settings where name = 'cursor_secret'`,
  );
  if (!row) throw new Error("cursor secret could not be stored");
  return row.value;
}
