import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { CorrectionRunner } from "../src/flows/corrections/correctionRunner.ts";
import { createMatchingEngine } from "../src/shards/engine.ts";
import { storeCatalogSource } from "../src/shards/source.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { openStore } from "../src/store/db.ts";
import { testDatabaseUrl } from "../test/support/environment.ts";

/**
 * Contract §15's correction at scale: on a copy of a kept load database (made by `bun run load … --keep-db`),
 * an import reschedules `--events` events holding about `--items` kept items between them by a week, and
 * the runner a server runs places those items again. Prints the import's time, the drain's, its rate and
 * the slowest single user's transaction (how long one user's batches could wait). The copy is dropped.
 */
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    database: { type: "string", default: "rollcall_load_e200000_s1_k10000000" },
    events: { type: "string", default: "1000" },
    items: { type: "string", default: "100000" },
  },
  strict: true,
});
const events = Number(values.events);
const perEvent = Math.round(Number(values.items) / events);
const copy = `${values.database}_corrections`;
const admin = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
const log = (line: string) => console.log(`[bench-corrections] ${line}`);
const settings = { radiusM: 500, beforeMinutes: 120, afterMinutes: 60, defaultDurationMinutes: 300 };

log(`copying ${values.database}`);
await admin.unsafe(`drop database if exists "${copy}" with (force)`);
await admin.unsafe(`create database "${copy}" template "${values.database}"`);
const url = new URL(testDatabaseUrl());
url.pathname = `/${copy}`;
const store = await openStore({ databaseUrl: url.toString(), dataDir: "", poolSize: 4 });
try {
  const [{ total } = { total: 0 }] = await store.rows<{ total: number }>(
    sql`select count(*)::int as total from media`,
  );
  // Events holding close to the wanted share each, so that the corrected ones hold about --items between them.
  const chosen = await store.rows<{ id: number; n: number }>(sql`
    select event_id as id, count(*)::int as n from media group by event_id
    order by abs(count(*) - ${perEvent}), event_id limit ${events}`);
  const touched = chosen.reduce((sum, e) => sum + e.n, 0);
  const rows = await store.rows<{
    id: number;
    name: string;
    venue_id: number;
    starts_at_local: string;
    ends_at_local: string | null;
    licensed: boolean;
  }>(sql`select id, name, venue_id, starts_at_local, ends_at_local, licensed from events
    where id = any(${sql.param(chosen.map((e) => e.id))}::int[])`);
  const week = (local: string) =>
    new Date(Date.parse(`${local}Z`) + 7 * 86_400_000).toISOString().slice(0, 19);
  const lines = rows.map((e) =>
    JSON.stringify({
      type: "event",
      id: e.id,
      name: e.name,
      venue_id: e.venue_id,
      starts_at_local: week(e.starts_at_local),
      ends_at_local: e.ends_at_local === null ? null : week(e.ends_at_local),
      licensed: e.licensed,
      performers: [],
    }),
  );
  const source = storeCatalogSource(store);
  const engine = await createMatchingEngine(source, { settings, shards: 4, workers: 0 });
  let started = performance.now();
  const report = await importCatalog(store, memoryLines(lines, lines.length));
  const importSeconds = (performance.now() - started) / 1000;
  if (!report.ok) throw new Error("the corrected lines did not import");
  await engine.refresh();
  // Each user's items are placed in one transaction: its length is how long that user's batches could wait.
  const userMs: number[] = [];
  const timedStore = {
    ...store,
    transaction: async <T>(work: Parameters<typeof store.transaction<T>>[0]) => {
      const began = performance.now();
      try {
        return await store.transaction(work);
      } finally {
        userMs.push(performance.now() - began);
      }
    },
  };
  const runner = new CorrectionRunner({
    store: timedStore,
    matcher: engine,
    indexVersion: () => Number(engine.catalog().version),
    catalog: source,
    settings,
    log: () => {},
  });
  started = performance.now();
  const done = await runner.drain();
  const drainSeconds = (performance.now() - started) / 1000;
  await engine.close();
  log(
    `${total.toLocaleString("en-US")} kept items; ${report.correctedEvents} events corrected, holding ${touched.toLocaleString("en-US")} kept items`,
  );
  log(
    `import ${importSeconds.toFixed(2)} s; drain ${drainSeconds.toFixed(1)} s (${Math.round(done.items / drainSeconds).toLocaleString("en-US")} items/s)`,
  );
  userMs.sort((a, b) => a - b);
  const at = (q: number) =>
    (userMs[Math.min(userMs.length - 1, Math.floor(q * userMs.length))] ?? 0).toFixed(1);
  log(`items ${done.items}, moved ${done.moved}, removed ${done.removed}, over ${userMs.length} users`);
  log(`a user's transaction: median ${at(0.5)} ms, p99 ${at(0.99)} ms, longest ${at(1)} ms`);
} finally {
  await store.close();
  await admin.unsafe(`drop database if exists "${copy}" with (force)`);
  await admin.end();
}
