import { sql } from "drizzle-orm";
import { openStore, type Store } from "../../src/store/db.ts";
import { createPartner, getPartner, issueKey, parsePresentedKey } from "../../src/store/keys.ts";
import type { LoadOptions } from "../args.ts";
import { catalogFile, importCatalog } from "./catalog.ts";
import { openLoadDatabase } from "./database.ts";
import { type ServerProcess, startServer } from "./server.ts";

/** The partner a self-started server's traffic belongs to. */
const LOAD_PARTNER = "loadtest";
/** Building the matching engine over a 2M-event catalog takes a while on two cores. */
const READY_TIMEOUT_MS = 300_000;

export type ServerSettings = { shards: number; workers: number };

/** What a scenario drives: a server (started here or already running), its key and its database. */
export type Target = {
  readonly baseUrl: string;
  readonly key: string;
  readonly partnerId: string;
  readonly store: Store;
  /** The process id of the self-started server (for its CPU share); null for a running one. */
  readonly serverPid: number | null;
  /** The SHARDS/WORKERS of the self-started server; null for a running one. */
  readonly server: ServerSettings | null;
  /** Whether the database already held the catalog and the kept items (a --keep-db rerun). */
  readonly reused: boolean;
  /**
   * Called before a scenario sends media: the kept users' histories are no longer as seeded, so the
   * next --keep-db run seeds them again (keeping the catalog) rather than measuring reads on them.
   */
  markTouched(): Promise<void>;
  /** Restarts the self-started server with other settings (the sweep). */
  restart(settings: ServerSettings): Promise<void>;
  close(): Promise<void>;
};

export type Log = (message: string) => void;

/**
 * A server already running on 127.0.0.1: nothing is started or dropped. Its database is read for the
 * catalog; the only writes are --kept-items users and the load users' own media (reset between runs).
 */
async function runningTarget(
  options: LoadOptions,
  url: string,
  key: string,
  databaseUrl: string,
): Promise<Target> {
  const presented = parsePresentedKey(key);
  if (presented === null) throw new Error("--key is not a partner API key (<partner_id>-<secret>)");
  const store = await openStore({ databaseUrl, dataDir: "", poolSize: 4 });
  return {
    baseUrl: url,
    key,
    partnerId: presented.partnerId,
    store,
    serverPid: null,
    server: null,
    reused: false,
    markTouched: () => Promise.resolve(),
    restart: () => Promise.reject(new Error(`${options.scenario} cannot restart a server it did not start`)),
    close: () => store.close(),
  };
}

/**
 * A throwaway database with a generated catalog imported, a partner and a sandbox key, and the server
 * started on it. `prepare` runs once the catalog is in and before the server starts (the data-scale
 * seeding); with --keep-db a database whose setup completed earlier skips both import and preparation.
 */
async function selfStartedTarget(
  options: LoadOptions,
  prepare: (store: Store, partnerId: string) => Promise<void>,
  log: Log,
): Promise<Target> {
  const kept = options.keepDb
    ? `rollcall_load_e${options.events}_s${options.seed}_k${options.keptItems}`
    : null;
  const database = await openLoadDatabase(kept);
  const store = await openStore({ databaseUrl: database.url, dataDir: "", poolSize: 4 });
  let server: ServerProcess | null = null;
  let settings: ServerSettings = { shards: options.shards[0] ?? 16, workers: options.workers[0] ?? 1 };
  const start = async () => {
    log(`starting rollcall (SHARDS=${settings.shards} WORKERS=${settings.workers})`);
    server = await startServer(
      "src/main.ts",
      {
        DATABASE_URL: database.url,
        SERVICE_ENVIRONMENT: "sandbox",
        DEMO: "false",
        SHARDS: String(settings.shards),
        WORKERS: String(settings.workers),
        ...options.serverEnv,
      },
      { label: "rollcall", readyTimeoutMs: READY_TIMEOUT_MS, profile: options.profile },
    );
  };
  try {
    if (database.found === "nothing") {
      log(`generating a ${options.events}-event catalog (seed ${options.seed})`);
      const file = await catalogFile(options.events, options.seed);
      log(`importing ${file} into ${database.name}`);
      await importCatalog(database.url, file);
    }
    if ((await getPartner(store, LOAD_PARTNER)) === null)
      await createPartner(store, { id: LOAD_PARTNER, name: "Load test" });
    const { key } = await issueKey(store, { partnerId: LOAD_PARTNER, environment: "sandbox", label: "load" });
    if (database.found === "catalog") {
      log(`an earlier run sent media to ${database.name}: seeding its users again`);
      await store.rows(sql`truncate media, user_event_media, user_events, users`);
    }
    if (database.found !== "setup") {
      await prepare(store, LOAD_PARTNER);
      // The tables as autovacuum would leave them on a live database: right after the bulk COPY of kept
      // items the planner statistics are stale and no page is all-visible, so index-only reads would
      // visit the heap. (The catalog import analyzes its own tables.)
      await store.rows(sql`vacuum (analyze)`);
      if (kept) await database.markComplete();
    }
    await start();
    const target: Target = {
      get baseUrl() {
        if (!server) throw new Error("the server is not running");
        return server.baseUrl;
      },
      key,
      partnerId: LOAD_PARTNER,
      store,
      get serverPid() {
        return server?.pid ?? null;
      },
      get server() {
        return settings;
      },
      reused: database.found === "setup",
      markTouched: () => database.markTouched(),
      async restart(next) {
        if (server && next.shards === settings.shards && next.workers === settings.workers) return;
        await server?.stop();
        settings = next;
        await start();
      },
      async close() {
        await server?.stop();
        await store.close();
        await database.release();
      },
    };
    return target;
  } catch (error) {
    await (server as ServerProcess | null)?.stop();
    await store.close();
    await database.release();
    throw error;
  }
}

export function openTarget(
  options: LoadOptions,
  prepare: (store: Store, partnerId: string) => Promise<void>,
  log: Log,
): Promise<Target> {
  if (options.url !== null && options.key !== null && options.databaseUrl !== null) {
    return runningTarget(options, options.url, options.key, options.databaseUrl).then(async (target) => {
      await prepare(target.store, target.partnerId);
      return target;
    });
  }
  return selfStartedTarget(options, prepare, log);
}

/** The catalog's size, for the report. */
export async function catalogCounts(store: Store): Promise<{ events: number; venues: number }> {
  const [row] = await store.rows<{ events: number; venues: number }>(
    sql`select (select count(*)::int from events) as events, (select count(*)::int from venues) as venues`,
  );
  return row ?? { events: 0, venues: 0 };
}
