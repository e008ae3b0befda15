import { sql } from "drizzle-orm";
import type { Store } from "./db.ts";

/**
 * How long the oldest transaction the service has open in its database has been running, in seconds
 * (0 when none): every instance's connections, which carry the application name `rollcall`. A request
 * holds a transaction for milliseconds and an export for as long as its client reads, at most its
 * deadline; one much older than that has leaked, and holds back vacuum meanwhile. Null on PGlite.
 */
export async function oldestTransactionSeconds(store: Store): Promise<number | null> {
  if (store.kind !== "postgres") return null;
  const [row] = await store.rows<{ seconds: number }>(
    sql`select coalesce(extract(epoch from now() - min(xact_start)), 0)::float8 as seconds
        from pg_stat_activity
        where datname = current_database() and application_name = 'rollcall'
          and pid <> pg_backend_pid() and xact_start is not null`,
  );
  return row?.seconds ?? 0;
}
