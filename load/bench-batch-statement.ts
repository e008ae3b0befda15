import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { batchPlanSettings } from "../src/store/batchInput.ts";
import type { BatchWrite, KeptMedia } from "../src/store/ingest.ts";

/**
 * The batch statement alone (src/store/ingest.ts batchStatement) at fixed inputs, for comparing
 * checkouts of it in the same minutes (docs/performance.md §11): each `--module` is an ingest.ts (a path
 * from the working directory) whose batchStatement is timed, round by round in turn, on the same
 * database (a kept load database of the current schema; an older statement ignores the newer columns).
 * Every execution runs in a transaction that is rolled back, so every round sees the same state, on one
 * connection with the statement prepared as the service prepares it, and is timed at the client (the
 * loopback round trip is in every figure alike).
 *
 *   bun load/bench-batch-statement.ts --database postgres://... --module a/src/store/ingest.ts \
 *     --module b/src/store/ingest.ts [--rounds 7] [--reps 40] [--explain]
 */

type Statement = (batch: BatchWrite) => SQL;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    database: { type: "string" },
    module: { type: "string", multiple: true },
    rounds: { type: "string", default: "7" },
    reps: { type: "string", default: "40" },
    explain: { type: "boolean", default: false },
  },
  strict: true,
});
if (!values.database || !values.module?.length) throw new Error("--database and --module are required");

const dialect = new PgDialect();
const client = postgres(values.database, { max: 1, onnotice: () => {} });
const modules: { name: string; statement: Statement }[] = [];
for (const path of values.module) {
  const loaded = (await import(resolve(path))) as { batchStatement: Statement };
  modules.push({ name: path, statement: loaded.batchStatement });
}

const PARTNER = "loadtest";
const USERS = {
  fresh: "00000000-0000-4000-8000-00000000c001",
  resent: "00000000-0000-4000-8000-00000000c002",
  five: "00000000-0000-4000-8000-00000000c003",
  venue: "00000000-0000-4000-8000-00000000c004",
};

const [venue] = await client<{ id: number }[]>`
  select venue_id as id from events where licensed group by venue_id order by count(*) desc limit 1`;
if (!venue) throw new Error("the database holds no licensed events");
const events = await client<{ id: number; starts_at: Date }[]>`
  select id, starts_at from events where licensed and venue_id = ${venue.id} order by id limit 40`;

/**
 * `n` items at `events[at]`; those where `outside(i)` holds outside the core, on six neighbouring cells,
 * the others in the core, on the centre's cell.
 */
function items(prefix: string, at: number, n: number, outside: (i: number) => boolean): KeptMedia[] {
  const event = events[at];
  if (!event) throw new Error(`no event ${at}`);
  return Array.from({ length: n }, (_, i) => ({
    mediaId: `${prefix}-${at}-${i}`,
    eventId: event.id,
    venueId: venue?.id ?? 0,
    takenAt: new Date(event.starts_at.getTime() + i * 30_000).toISOString(),
    latitude: 51.5 + i * 1e-5,
    longitude: -0.1,
    mediaType: i % 7 === 0 ? "video" : "photo",
    filename: `IMG_${i}.HEIC`,
    durationSeconds: i % 7 === 0 ? 12 : null,
    thumbnailUrl: null,
    deviceMake: "Apple",
    deviceModel: "iPhone 15 Pro",
    deviceLensModel: null,
    spot: outside(i) ? { row: 2 + (i % 2), column: -3 + (i % 3) } : { row: 0, column: 0 },
    inCore: !outside(i),
    weight: 0.4 + (i % 6) / 10,
  }));
}

const fresh = items("F", 0, 200, (i) => i % 3 === 0);
const fiveKept = items("N", 1, 5, (i) => i < 2);
const venueBatch = items("V", 30, 20, (i) => i % 2 === 0);
const seasonBatch = items("S", 22, 10, () => false);
const batches: Record<string, BatchWrite> = {
  "200 new at one event": { userId: USERS.fresh, partnerId: PARTNER, acceptedIds: ids(fresh), kept: fresh },
  "200 re-sent unchanged": { userId: USERS.resent, partnerId: PARTNER, acceptedIds: ids(fresh), kept: fresh },
  "5 new of 200": {
    userId: USERS.five,
    partnerId: PARTNER,
    acceptedIds: [...ids(fiveKept), ...Array.from({ length: 195 }, (_, i) => `unmatched-${i}`)],
    kept: fiveKept,
  },
  "none kept of 200": {
    userId: USERS.five,
    partnerId: PARTNER,
    acceptedIds: Array.from({ length: 200 }, (_, i) => `unmatched-${i}`),
    kept: [],
  },
  "10 new in the core, 20 events there": {
    userId: USERS.five,
    partnerId: PARTNER,
    acceptedIds: ids(seasonBatch),
    kept: seasonBatch,
  },
  "20 new, 30 events at the venue": {
    userId: USERS.venue,
    partnerId: PARTNER,
    acceptedIds: ids(venueBatch),
    kept: venueBatch,
  },
};
function ids(kept: readonly KeptMedia[]): string[] {
  return kept.map((m) => m.mediaId);
}

/** The settings the service runs a batch under. */
const SERVICE_PLAN_SETTINGS = dialect.sqlToQuery(batchPlanSettings).sql;

/** The users' committed state, written once with the last module (the one whose schema is current). */
async function seed(statement: Statement): Promise<void> {
  for (const id of Object.values(USERS)) {
    await client`insert into users (id, partner_id, email, email_key) values
      (${id}, ${PARTNER}, ${`${id}@bench.example`}, ${`${id}@bench.example`}) on conflict do nothing`;
  }
  const [{ n } = { n: 0 }] = await client<{ n: number }[]>`
    select count(*)::int as n from media where user_id = ${USERS.venue}`;
  if (n > 0) return;
  const history: BatchWrite[] = [
    { userId: USERS.resent, partnerId: PARTNER, acceptedIds: ids(fresh), kept: fresh },
    ...Array.from({ length: 20 }, (_, e) => items("H", e + 2, 10, () => false)).map((kept) => ({
      userId: USERS.five,
      partnerId: PARTNER,
      acceptedIds: ids(kept),
      kept,
    })),
    ...Array.from({ length: 30 }, (_, e) => items("R", e, 6, (i) => i < 4)).map((kept) => ({
      userId: USERS.venue,
      partnerId: PARTNER,
      acceptedIds: ids(kept),
      kept,
    })),
  ];
  for (const batch of history) await run(statement, batch, "commit");
}

async function run(statement: Statement, batch: BatchWrite, end: "commit" | "rollback"): Promise<number> {
  const query = dialect.sqlToQuery(statement(batch));
  return client.begin(async (tx) => {
    await tx.unsafe(SERVICE_PLAN_SETTINGS);
    const started = performance.now();
    await tx.unsafe(query.sql, query.params as never[], { prepare: true });
    const elapsed = performance.now() - started;
    if (end === "rollback") await tx.unsafe("rollback and chain");
    return elapsed;
  });
}

/** The plan the service runs, the cached generic one (docs/performance.md §11), with its actual times. */
async function explain(statement: Statement, batch: BatchWrite): Promise<string> {
  const query = dialect.sqlToQuery(statement(batch));
  let plan = "";
  await client
    .begin(async (tx) => {
      await tx.unsafe("set local enable_seqscan = off");
      await tx.unsafe("set local plan_cache_mode = force_generic_plan");
      const described = await tx.unsafe(query.sql, query.params as never[]).describe();
      const [{ types } = { types: "" }] = await tx<{ types: string }[]>`
        select string_agg(t::regtype::text, ', ' order by n) as types
        from unnest(${described.types}::oid[]) with ordinality as p(t, n)`;
      await tx.unsafe(`prepare batch_statement(${types}) as ${query.sql}`).simple();
      const literals: string[] = [];
      for (const [i, type] of types.split(", ").entries()) {
        const [{ text } = { text: "null" }] = await tx.unsafe<{ text: string }[]>(
          `select quote_nullable($1::${type}) as text`,
          [query.params[i]] as never[],
        );
        literals.push(`${text}::${type}`);
      }
      const rows = await tx.unsafe(
        `explain (analyze, buffers) execute batch_statement(${literals.join(", ")})`,
      );
      plan = rows.map((row) => Object.values(row)[0]).join("\n");
      throw new Error("rolled back");
    })
    .catch((error: Error) => {
      if (error.message !== "rolled back") throw error;
    });
  await client.unsafe("deallocate batch_statement");
  return plan;
}

const last = modules.at(-1);
if (last) await seed(last.statement);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const times = new Map<string, number[]>();
const rounds = Number(values.rounds);
const reps = Number(values.reps);
for (let round = 0; round < rounds; round++) {
  for (const [scenario, batch] of Object.entries(batches)) {
    for (const { name, statement } of round % 2 === 0 ? modules : [...modules].reverse()) {
      const runs: number[] = [];
      for (let i = 0; i < reps; i++) runs.push(await run(statement, batch, "rollback"));
      const key = `${scenario}\t${name}`;
      times.set(key, [...(times.get(key) ?? []), median(runs)]);
    }
  }
}
for (const [key, medians] of times) {
  const sorted = [...medians].sort((a, b) => a - b);
  console.log(
    `${key}\tmedian of round medians ${median(sorted).toFixed(3)} ms\t(${sorted.map((x) => x.toFixed(2)).join(" ")})`,
  );
}
if (values.explain) {
  for (const [scenario, batch] of Object.entries(batches)) {
    for (const { name, statement } of modules) {
      console.log(`\n=== ${scenario} — ${name}\n${await explain(statement, batch)}`);
    }
  }
}
// The service runs the statement on its cached generic plan; the timings are of that plan only if so.
const [plans] = await client<{ generic: number; custom: number }[]>`
  select sum(generic_plans)::int as generic, sum(custom_plans)::int as custom
  from pg_prepared_statements where statement like '%with incoming as%'`;
console.log(`batch statements run on generic plans ${plans?.generic}, on custom plans ${plans?.custom}`);
await client.end();
