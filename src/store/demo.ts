import { sql } from "drizzle-orm";
import { generateCatalog } from "./catalog/generate/index.ts";
import { importCatalog } from "./catalog/import.ts";
import { memoryLines } from "./catalog/lines.ts";
import type { Store } from "./db.ts";
import { createPartner, getPartner, issueKey, type KeyEnvironment, PartnerExistsError } from "./keys.ts";

/**
 * First-run experience on the embedded database: a fresh clone answers real requests straight away.
 * An empty catalog gets a generated demo catalog, and a `demo` partner gets a key printed once with a
 * curl line to try. Both steps are skipped when their data exists, so restarts change nothing.
 */

/** Small enough to load in a few seconds on PGlite, large enough to match photos around the world. */
const DEMO_EVENTS = 20_000;
const DEMO_SEED = 2026;
const DEMO_PARTNER = "demo";

export type DemoOptions = {
  /** Where the server will listen, for the curl line (e.g. `http://127.0.0.1:3000/v1`). */
  baseUrl: string;
  /** The environment this deployment serves: the demo key must be valid here. */
  environment: KeyEnvironment;
};

async function loadDemoCatalog(store: Store, log: (line: string) => void): Promise<void> {
  const [row] = await store.rows<{ present: boolean }>(sql`select exists (select 1 from events) as present`);
  if (row?.present) return;
  const started = performance.now();
  const result = await importCatalog(
    store,
    memoryLines(generateCatalog({ events: DEMO_EVENTS, seed: DEMO_SEED })),
  );
  if (!result.ok) {
    throw new Error(
      `the demo catalog failed validation: line ${result.errors[0]?.line}: ${result.errors[0]?.message}`,
    );
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(
    `Loaded a demo catalog: ${result.events.inFile} events at ${result.venues.inFile} venues, ${result.performers.inFile} performers (${seconds} s).`,
  );
}

async function createDemoPartner(
  store: Store,
  log: (line: string) => void,
  options: DemoOptions,
): Promise<void> {
  if ((await getPartner(store, DEMO_PARTNER)) !== null) return;
  try {
    await createPartner(store, { id: DEMO_PARTNER, name: "Demo partner" });
  } catch (error) {
    // Another instance booting on the same database got there first; it prints the key.
    if (error instanceof PartnerExistsError) return;
    throw error;
  }
  const { key } = await issueKey(store, {
    partnerId: DEMO_PARTNER,
    environment: options.environment,
    label: "demo",
  });
  log(`Created partner "${DEMO_PARTNER}" with a ${options.environment} key (shown only this once): ${key}`);
  log(`Try it: curl -H "X-PARTNER-API-KEY: ${key}" ${options.baseUrl}/health`);
}

export async function bootstrapDemo(
  store: Store,
  log: (line: string) => void,
  options: DemoOptions,
): Promise<void> {
  await loadDemoCatalog(store, log);
  await createDemoPartner(store, log, options);
}
