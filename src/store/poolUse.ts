import type postgres from "postgres";
import { reservedForRequest, sentForRequest } from "./requestScope.ts";

/**
 * A pool's use. postgres.js shows nothing of its queue, so the store counts what passes through it:
 * `busy` is the statements sent through `rows`/`read` and not yet answered plus the connections held
 * by batches (`reserve`); `waits` and `waitSeconds` add up every batch's wait for its connection.
 */
export type PoolUse = {
  pool: "main" | "read" | "export" | "embedded";
  connections: number;
  busy: number;
  waits: number;
  waitSeconds: number;
};

export const poolUse = (pool: PoolUse["pool"], connections: number): PoolUse => ({
  pool,
  connections,
  busy: 0,
  waits: 0,
  waitSeconds: 0,
});

/** Runs `work` counted as busy in `use` for as long as it is unanswered. */
export async function counted<T>(use: PoolUse, work: () => Promise<T>): Promise<T> {
  use.busy++;
  try {
    return await work();
  } finally {
    use.busy--;
  }
}

/** Answers whether `check` settles successfully within `timeoutMs`; never throws. */
export async function answersWithin(check: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([check().then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** A reserved connection whose statements are sent as the current request's, like the pool's. */
function requestBound(connection: postgres.ReservedSql): postgres.ReservedSql {
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property !== "unsafe") return Reflect.get(target, property, receiver);
      return (
        query: string,
        args?: postgres.ParameterOrJSON<never>[],
        options?: postgres.UnsafeQueryOptions,
      ) => sentForRequest(() => target.unsafe(query, args, options));
    },
  });
}

/**
 * The client with `reserve` counted in `use`: the time until a connection is handed over, and the
 * connection as busy until it is released. A reservation is the current request's: given up when the
 * request ends first, its statements called off with it (requestScope.ts).
 */
export function countingReservations(client: postgres.Sql, use: PoolUse): postgres.Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "reserve") return Reflect.get(target, property, receiver);
      return async () => {
        const asked = performance.now();
        const reserved = await reservedForRequest(() => target.reserve());
        use.waits++;
        use.waitSeconds += (performance.now() - asked) / 1000;
        use.busy++;
        const release = reserved.release;
        let held = true;
        reserved.release = () => {
          if (!held) return;
          held = false;
          use.busy--;
          release();
        };
        return requestBound(reserved);
      };
    },
  });
}
