import { sql } from "drizzle-orm";
import type { Store } from "../../src/store/db.ts";
import type { MixedUser } from "../drive/mixed.ts";

/** Parallel creations while preparing: enough to be quick, few enough not to be a load test of its own. */
const PREPARE_CONCURRENCY = 8;

/**
 * Creates the traffic users through the API (POST /v1/users is idempotent on the email, so a rerun on
 * a kept database gets the same ids back) and returns their ids in order.
 */
export async function createUsers(
  baseUrl: string,
  key: string,
  bodies: readonly { email: string }[],
): Promise<string[]> {
  const ids: string[] = new Array(bodies.length);
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const index = next++;
      const response = await fetch(`${baseUrl}/v1/users`, {
        method: "POST",
        headers: { "x-partner-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(bodies[index]),
      });
      const body = (await response.json()) as { user_id?: string };
      if (!response.ok || typeof body.user_id !== "string") {
        throw new Error(`POST /v1/users answered ${response.status}: ${JSON.stringify(body)}`);
      }
      ids[index] = body.user_id;
    }
  };
  await Promise.all(Array.from({ length: PREPARE_CONCURRENCY }, worker));
  return ids;
}

/** The users the data-scale seeder created for a partner (it names them kept-N@load.example). */
const keptUsersOf = (partnerId: string) =>
  sql`users.partner_id = ${partnerId} and users.email like 'kept-%@load.example'`;

/** The users the data-scale seeder created for the partner, in id order. */
export async function keptUsers(store: Store, partnerId: string): Promise<MixedUser[]> {
  return store.rows<MixedUser>(sql`
    select id::text as id, email from users where ${keptUsersOf(partnerId)} order by id`);
}

/**
 * How many media items the kept users hold now: what a run reads, whatever --kept-items asked for.
 * Summed from user_events, whose counts are exact, in a tenth of a second where counting 10 million
 * media rows takes seconds.
 */
export async function keptItemCount(store: Store, partnerId: string): Promise<number> {
  const [row] = await store.rows<{ n: string }>(sql`
    select coalesce(sum(ue.media_count), 0)::text as n
    from user_events ue join users on users.id = ue.user_id
    where ${keptUsersOf(partnerId)}`);
  return Number(row?.n ?? 0);
}

/** Removes what earlier runs kept for the traffic users, so every measured run starts from the same state. */
export async function forgetMedia(store: Store, userIds: readonly string[]): Promise<void> {
  const ids = sql`${`{${userIds.join(",")}}`}::uuid[]`;
  await store.rows(sql`delete from media where user_id = any(${ids})`);
  await store.rows(sql`delete from user_events where user_id = any(${ids})`);
}
