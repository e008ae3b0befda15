import { sql } from "drizzle-orm";
import { openStore, type Store } from "../../src/store/db.ts";
import { createPartner, issueKey } from "../../src/store/keys.ts";
import { createPrivateCluster, type PrivateCluster } from "../../test/support/privateCluster.ts";
import type { LoadOptions } from "../args.ts";
import { catalogFile, importCatalog } from "./catalog.ts";
import type { Log } from "./index.ts";
import { type ServerProcess, startServer } from "./server.ts";

/**
 * rollcall on a PostgreSQL cluster of the run's own (initdb into /tmp, a free port on 127.0.0.1), for a
 * scenario that restarts PostgreSQL: the machine's shared cluster serves other work and is never touched.
 * The cluster is the fault tests' (test/support/privateCluster.ts): one way of running a throwaway
 * cluster, with the root and postgres-user handling, in one place.
 */

const PARTNER = "loadtest";
const DATABASE = "rollcall_load";
const READY_TIMEOUT_MS = 300_000;

export type PrivateTarget = {
  readonly cluster: PrivateCluster;
  readonly databaseUrl: string;
  readonly key: string;
  readonly partnerId: string;
  /** A small pool of the load tool's own, for setup and the report; closed before the fault. */
  readonly store: Store;
  readonly server: ServerProcess;
  /** Closes the tool's pool; the server keeps its own. Safe to call more than once. */
  closeStore(): Promise<void>;
  /** Stops the server and removes the cluster, whatever state either is in. */
  close(): Promise<void>;
};

/**
 * The cluster, the catalog imported with the operator CLI, a partner with a sandbox key, `prepare`
 * (the kept users the reads go to), then the server. Whatever was started is stopped if a step fails.
 */
export async function openPrivateTarget(
  options: LoadOptions,
  prepare: (store: Store, partnerId: string) => Promise<void>,
  log: Log,
): Promise<PrivateTarget> {
  log("starting a private PostgreSQL cluster");
  const cluster = await createPrivateCluster();
  let store: Store | null = null;
  let server: ServerProcess | null = null;
  const closeStore = async () => {
    const open = store;
    store = null;
    await open?.close();
  };
  const close = async () => {
    try {
      await (server as ServerProcess | null)?.stop();
      await closeStore();
    } finally {
      await cluster.destroy();
    }
  };
  try {
    const databaseUrl = await cluster.createDatabase(DATABASE);
    log(`generating a ${options.events}-event catalog (seed ${options.seed}) and importing it`);
    await importCatalog(databaseUrl, await catalogFile(options.events, options.seed));
    const opened = await openStore({ databaseUrl, dataDir: "", poolSize: 4 });
    store = opened;
    await createPartner(opened, { id: PARTNER, name: "Load test" });
    const { key } = await issueKey(opened, { partnerId: PARTNER, environment: "sandbox", label: "load" });
    await prepare(opened, PARTNER);
    // As autovacuum would leave the tables on a live database (see selfStartedTarget).
    await opened.rows(sql`vacuum (analyze)`);
    const settings = { SHARDS: String(options.shards[0] ?? 16), WORKERS: String(options.workers[0] ?? 0) };
    log(
      `starting rollcall on port ${cluster.port}'s cluster (SHARDS=${settings.SHARDS} WORKERS=${settings.WORKERS})`,
    );
    const started = await startServer(
      "src/main.ts",
      {
        DATABASE_URL: databaseUrl,
        SERVICE_ENVIRONMENT: "sandbox",
        DEMO: "false",
        ...settings,
        ...options.serverEnv,
      },
      { label: "rollcall-restart", readyTimeoutMs: READY_TIMEOUT_MS, profile: options.profile },
    );
    server = started;
    return {
      cluster,
      databaseUrl,
      key,
      partnerId: PARTNER,
      store: opened,
      server: started,
      closeStore,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
