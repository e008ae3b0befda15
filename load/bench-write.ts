import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { Random } from "../src/store/catalog/generate/random.ts";
import { openStore, type Store, type TransactionRows } from "../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../src/store/ingest.ts";
import { createPartner } from "../src/store/keys.ts";
import { createUser } from "../src/store/users.ts";
import { importGeneratedCatalog, keptBatches, type WriteBatch } from "./bench/writeFixture.ts";
import { describeMachine } from "./report/machine.ts";
import { writeResultJson } from "./report/write.ts";
import { openLoadDatabase } from "./target/database.ts";
import { readCatalogSample } from "./traffic/sample.ts";

/**
 * The hot write path against its floor: the store function the media API commits every batch with
 * (src/store/ingest.ts writeBatch: sync mark, upsert, stale-match removal, user_events counts, one
 * transaction) versus one hand-written `INSERT ... SELECT * FROM unnest(...) ON CONFLICT DO UPDATE` of the
 * same rows. Each is timed on fresh rows (inserts) and on the same batches again (re-sends, upserts).
 */

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    batches: { type: "string", default: "400" },
    rows: { type: "string", default: "200" },
    users: { type: "string", default: "50" },
    concurrency: { type: "string", default: "4" },
    rounds: { type: "string", default: "5" },
  },
  strict: true,
});
const count = (name: string, text: string) => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000) throw new Error(`--${name}: got ${text}`);
  return value;
};
const options = {
  batches: count("batches", values.batches),
  rows: Math.min(200, count("rows", values.rows)),
  users: count("users", values.users),
  concurrency: count("concurrency", values.concurrency),
  rounds: count("rounds", values.rounds),
};

/** The hand-written floor: one statement, no transaction block, nothing but the upsert itself. */
function unnestUpsert(runner: Pick<Store, "rows"> | TransactionRows, batch: WriteBatch): Promise<unknown> {
  const column = <T>(pick: (item: KeptMedia) => T) => sql.param(batch.kept.map(pick));
  return runner.rows(
    sql`
    insert into media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude, media_type, filename,
                       duration_seconds, thumbnail_url, device_make, device_model, device_lens_model, updated_at)
    select ${batch.userId}::uuid, media_id, event_id, venue_id, taken_at::timestamptz, latitude, longitude, media_type,
           filename, duration_seconds, thumbnail_url, device_make, device_model, device_lens_model, now()
    from unnest(
      ${column((m) => m.mediaId)}::text[], ${column((m) => m.eventId)}::int[], ${column((m) => m.venueId)}::int[],
      ${column((m) => m.takenAt)}::text[], ${column((m) => m.latitude)}::float8[],
      ${column((m) => m.longitude)}::float8[], ${column((m) => m.mediaType)}::text[],
      ${column((m) => m.filename)}::text[], ${column((m) => m.durationSeconds)}::float8[],
      ${column((m) => m.thumbnailUrl)}::text[], ${column((m) => m.deviceMake)}::text[],
      ${column((m) => m.deviceModel)}::text[], ${column((m) => m.deviceLensModel)}::text[]
    ) as u(media_id, event_id, venue_id, taken_at, latitude, longitude, media_type, filename, duration_seconds,
           thumbnail_url, device_make, device_model, device_lens_model)
    on conflict (user_id, media_id) do update set
      event_id = excluded.event_id, venue_id = excluded.venue_id, taken_at = excluded.taken_at,
      latitude = excluded.latitude, longitude = excluded.longitude, media_type = excluded.media_type,
      filename = excluded.filename, duration_seconds = excluded.duration_seconds,
      thumbnail_url = excluded.thumbnail_url, device_make = excluded.device_make,
      device_model = excluded.device_model, device_lens_model = excluded.device_lens_model,
      updated_at = excluded.updated_at`,
  );
}

/**
 * Where writeBatch's time goes: the same floor wrapped in writeBatch's transaction with its sync-mark
 * update, i.e. everything but the stale-match removal and the user_events counts.
 */
function unnestInTransaction(store: Store, batch: WriteBatch): Promise<unknown> {
  return store.transaction(async (tx) => {
    await tx.rows(
      sql`update users set last_sync_at = greatest(last_sync_at, now()) where id = ${batch.userId}::uuid`,
    );
    await unnestUpsert(tx, batch);
  });
}

const methods = {
  writeBatch: (store: Store, batch: WriteBatch) =>
    writeBatch(store, {
      userId: batch.userId,
      partnerId: "bench",
      acceptedIds: batch.kept.map((m) => m.mediaId),
      kept: batch.kept,
    }),
  unnestUpsert,
  unnestInTransaction,
};
type Method = keyof typeof methods;

/** Rows per second of one pass over every batch, `concurrency` batches in flight (different users). */
async function timedPass(store: Store, method: Method, batches: readonly WriteBatch[]): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++];
      if (batch) await methods[method](store, batch);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const rows = batches.reduce((sum, batch) => sum + batch.kept.length, 0);
  return Math.round(rows / ((performance.now() - started) / 1000));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main(): Promise<void> {
  const database = await openLoadDatabase(null);
  const store = await openStore({
    databaseUrl: database.url,
    dataDir: "",
    poolSize: options.concurrency + 1,
  });
  try {
    await importGeneratedCatalog(store, 20_000, 1);
    await createPartner(store, { id: "bench", name: "Write bench" });
    const userIds: string[] = [];
    for (let i = 0; i < options.users; i++) {
      const user = { email: `bench-${i}@example.com`, partnerUserId: null, firstName: null, lastName: null };
      userIds.push((await createUser(store, "bench", { ...user, phoneNumber: null, address: null })).id);
    }
    const sample = await readCatalogSample(store, 20_000, 1);
    const batches = keptBatches(new Random(1), sample, loadConfig().match, userIds, options);
    const results: Record<string, number[]> = {};
    const record = (name: string, rowsPerSecond: number) => {
      results[name] = [...(results[name] ?? []), rowsPerSecond];
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const method of Object.keys(methods) as Method[]) {
        await store.rows(sql`truncate media, user_event_media, user_events`);
        await store.rows(sql`vacuum analyze media`);
        record(`${method} insert`, await timedPass(store, method, batches));
        record(`${method} re-send`, await timedPass(store, method, batches));
      }
    }
    const rowsPerSecond = Object.fromEntries(
      Object.entries(results).map(([name, runs]) => [name, median(runs)]),
    );
    const ratio = (method: Method, phase: string) =>
      Math.round(
        (1000 * (rowsPerSecond[`${method} ${phase}`] ?? 0)) / (rowsPerSecond[`unnestUpsert ${phase}`] ?? 1),
      ) / 10;
    const ratios: Record<string, number> = {};
    for (const phase of ["insert", "re-send"]) {
      ratios[`${phase}: writeBatch % of unnestUpsert`] = ratio("writeBatch", phase);
      ratios[`${phase}: unnestInTransaction % of unnestUpsert`] = ratio("unnestInTransaction", phase);
    }
    console.table(
      Object.entries(results).map(([name, runs]) => ({
        pass: name,
        "median rows/s": median(runs),
        runs: runs.join(" "),
      })),
    );
    for (const [name, value] of Object.entries(ratios)) console.log(`${name}: ${value}`);
    const report = {
      options,
      machine: await describeMachine(store.client),
      rowsPerSecond,
      runs: results,
      ratios,
    };
    const path = writeResultJson("bench-write", report);
    console.log(`wrote ${path}`);
  } finally {
    await store.close();
    await database.release();
  }
}

await main();
