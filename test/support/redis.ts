import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

/** The Redis every development machine and CI runs (started by .ci/run when it is down). */
export const TEST_REDIS_URL = "redis://127.0.0.1:6379";

/** A Redis URL nothing listens on: port 9 (discard) is closed on these machines. */
export const CLOSED_REDIS_URL = "redis://127.0.0.1:9";

/** A key prefix of one test run, so concurrent runs never share budgets and cleanup touches only ours. */
export function uniqueRedisPrefix(): string {
  return `rollcall-test:${randomBytes(6).toString("hex")}:`;
}

/** Deletes every key under `prefix` (and nothing else). */
export async function flushRedisPrefix(prefix: string): Promise<void> {
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

/** Every key under `prefix` with its remaining time to live in milliseconds (-1: none). */
export async function redisKeysUnder(prefix: string): Promise<{ key: string; ttlMs: number }[]> {
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const found: { key: string; ttlMs: number }[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      for (const key of keys) found.push({ key, ttlMs: await client.pttl(key) });
      cursor = next;
    } while (cursor !== "0");
    return found;
  } finally {
    client.disconnect();
  }
}
