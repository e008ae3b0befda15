import type postgres from "postgres";

/** The least time between two renewals: while the server is away, refusals close connections many times a second. */
const RENEWAL_INTERVAL_MS = 1000;

/** How long closing gives the current pool's statements to finish, as postgres.js's `end` counts it. */
const CLOSE_SECONDS = 5;

export type RenewingPool = {
  /** Always the current pool: statements sent through it go to whichever pool is current then. */
  readonly client: postgres.Sql;
  end(): Promise<void>;
};

/**
 * A connection pool that is replaced by a fresh one after one of its connections closes. postgres.js
 * (3.4) can leave a connection that closed while a statement was still waiting to be written unable
 * ever to connect again: the waiting bytes stay queued in front of its next start-up message, which is
 * then never sent. That happens when the server ends sessions under load (a restart, a failover, an
 * operator terminating backends), so after any close new statements go to a new pool, and the old one
 * finishes what it holds and is ended. `open` makes a pool that calls `onclose` when a connection closes;
 * `retireSeconds` is how long a retired pool may finish what it was given (a statement waiting for a
 * connection that can no longer connect waits that long, then fails) before its connections are closed.
 */
export function renewingPool(
  open: (onclose: () => void) => postgres.Sql,
  retireSeconds: number,
): RenewingPool {
  let ended = false;
  let renewedAt = Number.NEGATIVE_INFINITY;
  let pending: ReturnType<typeof setTimeout> | null = null;
  const make = (): postgres.Sql => {
    const made = open(() => {
      if (made !== current || ended || pending !== null) return;
      pending = setTimeout(renew, Math.max(0, renewedAt + RENEWAL_INTERVAL_MS - performance.now()));
    });
    return made;
  };
  let current = make();
  function renew(): void {
    pending = null;
    if (ended) return;
    const retired = current;
    current = make();
    renewedAt = performance.now();
    // Ended at once when its time is up: postgres.js's `end` would otherwise leave statements still
    // waiting for a connection waiting for good once its connections had closed.
    setTimeout(() => void retired.end({ timeout: 0 }).catch(() => {}), retireSeconds * 1000).unref();
  }
  // A function target, so the pool can be called as a tagged template like postgres.js's own.
  const client = new Proxy(function pool() {}, {
    apply: (_, thisArg, args) => Reflect.apply(current, thisArg, args),
    get: (_, property) => Reflect.get(current, property),
  }) as unknown as postgres.Sql;
  return {
    client,
    async end() {
      ended = true;
      if (pending !== null) clearTimeout(pending);
      // A pool retired earlier ends on its own clock; closing does not wait for it.
      await current.end({ timeout: CLOSE_SECONDS });
    },
  };
}
