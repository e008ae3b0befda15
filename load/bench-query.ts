import { eq, inArray, sql } from "drizzle-orm";
import { openStore } from "../src/store/db.ts";
import { events, venues } from "../src/store/schema/index.ts";
import { importGeneratedCatalog } from "./bench/writeFixture.ts";
import { describeMachine } from "./report/machine.ts";
import { writeResultJson } from "./report/write.ts";
import { openLoadDatabase } from "./target/database.ts";

/**
 * What one statement costs the server, by the way it is sent: the events-with-venues query of a history
 * page (25 ids) through Drizzle's dynamic query builder (built every call; the store's client sends it
 * as a prepared statement, see src/store/db.ts), as a Drizzle prepared statement, and through
 * postgres.js directly. Client CPU per query is this process's
 * CPU time over the queries answered; PostgreSQL's share is not in it.
 */

const SECONDS = 3;
const CONCURRENCY = 16;

async function timed(
  run: () => Promise<unknown>,
): Promise<{ queriesPerSecond: number; clientCpuMs: number }> {
  await run();
  const started = performance.now();
  const cpu = process.cpuUsage();
  const deadline = started + SECONDS * 1000;
  let queries = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await run();
        queries++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    queriesPerSecond: Math.round(queries / ((performance.now() - started) / 1000)),
    clientCpuMs: Math.round(((used.user + used.system) / 1000 / queries) * 1000) / 1000,
  };
}

async function main(): Promise<void> {
  const database = await openLoadDatabase(null);
  const store = await openStore({ databaseUrl: database.url, dataDir: "", poolSize: CONCURRENCY });
  try {
    const client = store.client;
    if (client === null) throw new Error("bench-query needs PostgreSQL");
    await importGeneratedCatalog(store, 20_000, 1);
    await store.rows(sql`analyze`);
    const ids = Array.from({ length: 25 }, (_, i) => 1 + i * 797);
    const page = () =>
      store.db
        .select({ id: events.id, name: events.name, venue: venues.name })
        .from(events)
        .innerJoin(venues, eq(venues.id, events.venueId))
        .where(inArray(events.id, ids));
    const prepared = page().prepare("bench_page");
    const variants: Record<string, () => Promise<unknown>> = {
      "drizzle, dynamic (as the API sends it)": () => page(),
      "drizzle, prepared": () => prepared.execute(),
      "postgres.js, prepared": () =>
        client`select e.id, e.name, v.name as venue from events e join venues v on v.id = e.venue_id
               where e.id = any(${ids}::int[])`,
    };
    const results: Record<string, { queriesPerSecond: number; clientCpuMs: number }> = {};
    for (const [name, run] of Object.entries(variants)) results[name] = await timed(run);
    console.table(
      Object.entries(results).map(([path, r]) => ({
        path,
        "queries/s": r.queriesPerSecond,
        "client CPU ms/query": r.clientCpuMs,
      })),
    );
    const report = {
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      machine: await describeMachine(client),
      results,
    };
    const path = writeResultJson("bench-query", report);
    console.log(`wrote ${path}`);
  } finally {
    await store.close();
    await database.release();
  }
}

await main();
