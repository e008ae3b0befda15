/**
 * A pool's use. postgres.js shows nothing of its queue, so the store counts what passes through it:
 * `busy` is the statements sent through `rows`/`read` and not yet answered plus the connections held
 * by batches (`reserve`); `waits` and `waitSeconds` add up every batch's wait for its connection.
 */
export type PoolUse = {
  pool: "main" | "read" | "export" | "standby" | "standby_export" | "embedded";
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
