import postgres from "postgres";
import type { PrivateCluster } from "./privateCluster.ts";
import { waitFor } from "./processes.ts";
import { type ServiceProcess, startService } from "./serviceProcess.ts";

/**
 * What the replication tests share: the service's own view of where it writes and reads (`/readyz`,
 * `/metrics`), calls with any method, and waiting for a standby to replay what its primary holds.
 */

export type DatabaseDetail = { writes: string | null; reads: string; replication_lag_seconds: number | null };

/** The host a private cluster names itself by, as /readyz and the metrics show it. */
export const hostOf = (cluster: PrivateCluster) => `127.0.0.1:${cluster.port}`;

export async function readyDetail(service: ServiceProcess): Promise<DatabaseDetail | null> {
  try {
    const response = await fetch(`${service.baseUrl}/readyz`, { signal: AbortSignal.timeout(3_000) });
    return ((await response.json()) as { database?: DatabaseDetail }).database ?? null;
  } catch {
    return null;
  }
}

/** Waits until /readyz says `role` is served by `host` (reads: "primary" or a host). */
export async function servedBy(
  service: ServiceProcess,
  role: "writes" | "reads",
  host: string,
  timeoutMs = 10_000,
) {
  const deadline = performance.now() + timeoutMs;
  let last: DatabaseDetail | null = null;
  while (performance.now() < deadline) {
    last = await readyDetail(service);
    if (last?.[role] === host) return;
    await Bun.sleep(100);
  }
  throw new Error(
    `${role} not served by ${host} within ${timeoutMs} ms; /readyz said ${JSON.stringify(last)}`,
  );
}

export const readsServedBy = (service: ServiceProcess, host: string) => servedBy(service, "reads", host);

/** `rollcall_db_standby_reads_total` by outcome, summed over the instance's threads. */
export async function standbyReadCounts(metricsPort: number) {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const count = (outcome: string) =>
    Number(
      new RegExp(`^rollcall_db_standby_reads_total\\{outcome="${outcome}"\\} (\\d+)`, "m").exec(text)?.[1] ??
        0,
    );
  return {
    standby: count("standby"),
    behind: count("behind"),
    failed: count("failed"),
    skipped: count("skipped"),
  };
}

/** One API call with any method; the answer's status and parsed body. */
export async function api(
  service: ServiceProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${service.baseUrl}/v1${path}`, {
    method,
    headers: { "x-partner-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * What a user's reads show: the kept items of each visible event in the history, the stats' total, and
 * the export's items and hidden events.
 */
export async function userView(service: ServiceProcess, key: string, userId: string) {
  const history = await api(service, key, "GET", `/users/${userId}/events?limit=100`);
  const stats = await api(service, key, "GET", `/users/${userId}/stats`);
  const exported = await api(service, key, "GET", `/users/${userId}/export`);
  const page = history.body as { events?: { id: number; media_count: number }[] };
  const document = exported.body as { media?: unknown[]; hidden_event_ids?: number[] };
  return {
    statuses: [history.status, stats.status, exported.status],
    history: Object.fromEntries((page.events ?? []).map((e) => [e.id, e.media_count])),
    statsMedia: (stats.body as { media_count?: number }).media_count,
    exported: [document.media?.length ?? 0, document.hidden_event_ids],
  };
}

/** Runs `query` on `url` on a connection of its own. */
export async function queryOn<T>(url: string, query: string, params: string[] = []): Promise<T[]> {
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    return [...(await client.unsafe(query, params))] as T[];
  } finally {
    await client.end({ timeout: 1 });
  }
}

/** Waits until the standby has replayed everything the primary had written when this was called. */
export async function replayed(primary: PrivateCluster, standby: PrivateCluster, timeoutMs = 10_000) {
  const [row] = await primary.admin<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn");
  const target = row?.lsn ?? "0/0";
  let done = false;
  const check = async () => {
    const [replay] = await standby.admin<{ done: boolean }>(
      "select pg_last_wal_replay_lsn() >= $1::pg_lsn as done",
      [target],
    );
    done = replay?.done === true;
  };
  const deadline = performance.now() + timeoutMs;
  while (!done && performance.now() < deadline) {
    await check();
    if (!done) await Bun.sleep(50);
  }
  await waitFor("the standby to replay the primary's writes", () => done, 0);
}

/** The service on `primaryUrl` with reads on `standbyUrl`, its metrics on `metricsPort`. */
export function serviceWithStandby(
  primaryUrl: string,
  standbyUrl: string,
  metricsPort: number,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  return startService({
    DATABASE_URL: primaryUrl,
    DATABASE_READ_URL: standbyUrl,
    METRICS_PORT: String(metricsPort),
    ...env,
  });
}
