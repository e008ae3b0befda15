import { buildInBackground } from "../src/shards/build.ts";
import type { CatalogColumns } from "../src/shards/columns.ts";
import { Generation } from "../src/shards/generation.ts";
import { type IndexBuffers, indexBytes } from "../src/shards/layout.ts";
import type { MatchQuery, MatchSettings } from "../src/shards/matcher.ts";
import { testDatabaseUrl } from "../test/support/environment.ts";
import { generateBatches, generateCatalog } from "./bench-match-catalog.ts";
import { loadPostgis } from "./bench-match-postgis.ts";
import { type BenchResults, markdown, save } from "./bench-match-report.ts";

/**
 * `bun run bench:match [--sizes 100000,2000000,10000000] [--shards 1,4,16,64] [--no-postgis]`
 * Builds the index for generated catalogs, matches the same 200-item batches with WORKERS 0/1/2 and
 * each SHARDS value, and the same batches with PostGIS; prints a table and writes JSON to load/results/.
 */

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const BATCHES = 500;
/** Batches in flight at once in the concurrent runs, like a busy server's requests. */
const CONCURRENCY = 16;
const MEASURE_MS = 1000;
/**
 * Each rate is the best of this many runs: on a shared machine other processes only ever slow a run
 * down, so the fastest run is the one closest to what the engine can do.
 */
const REPEATS = 3;
const POSTGIS_BATCHES = 60;
const POOL = { minTaskItems: 256, maxTaskItems: 4096, taskTimeoutMs: 30_000 };

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const sizes = option("sizes", "100000,2000000,10000000").split(",").map(Number);
const shardCounts = option("shards", "1,4,16,64").split(",").map(Number);
const withPostgis = !process.argv.includes("--no-postgis");

const results: BenchResults = { builds: [], matches: [], granularity: [], postgis: [] };

function log(kind: string, row: object): void {
  console.log(
    `${kind.padEnd(12)} ${Object.entries(row)
      .map(([key, value]) => `${key}=${value}`)
      .join("  ")}`,
  );
}

function copyColumns(columns: CatalogColumns): CatalogColumns {
  return structuredClone(columns);
}

async function timedBuild(columns: CatalogColumns, shards: number) {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const copy = copyColumns(columns);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const index = await buildInBackground(copy, { settings: SETTINGS, shards, generation: 1 });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  clearInterval(sampler);
  return {
    index,
    seconds: Number(seconds.toFixed(2)),
    // The main thread only samples memory meanwhile: the process's CPU time is the build thread's.
    cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(2)),
    peakRssMb: Math.round(Math.max(peak, process.memoryUsage().rss) / 1e6),
  };
}

/**
 * Items per second matching the batches over and over for MEASURE_MS, `concurrency` batches at a
 * time: the best of REPEATS runs after a warm-up. Also items per CPU-second of the whole process over
 * all runs, which other processes on the machine disturb far less than wall time.
 */
async function throughput(generation: Generation, batches: MatchQuery[][], concurrency: number) {
  let next = 0;
  let items = 0;
  const runUntil = async (deadline: number) => {
    while (performance.now() < deadline) {
      const batch = batches[next++ % batches.length] ?? [];
      await generation.match(batch);
      items += batch.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => runUntil(performance.now() + 300)));
  let rate = 0;
  let total = 0;
  const cpu = process.cpuUsage();
  for (let run = 0; run < REPEATS; run++) {
    items = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, () => runUntil(started + MEASURE_MS)));
    rate = Math.max(rate, Math.round(items / ((performance.now() - started) / 1000)));
    total += items;
  }
  const used = process.cpuUsage(cpu);
  return { rate, perCpuSecond: Math.round(total / ((used.user + used.system) / 1e6)) };
}

async function matchRates(index: IndexBuffers, size: number, shards: number, batches: MatchQuery[][]) {
  for (const workers of [0, 1, 2]) {
    const generation = new Generation(index, "1", { settings: SETTINGS, shards, pool: { ...POOL, workers } });
    const sequential = await throughput(generation, batches, 1);
    const concurrent = workers === 0 ? sequential : await throughput(generation, batches, CONCURRENCY);
    const row = {
      events: size,
      shards,
      workers,
      sequential: sequential.rate,
      concurrent: concurrent.rate,
      perCpuSecond: concurrent.perCpuSecond,
    };
    results.matches.push(row);
    log("match", row);
    await generation.close();
  }
}

async function granularity(index: IndexBuffers, size: number, batches: MatchQuery[][]) {
  for (const minTaskItems of [32, 128, 256, 1024]) {
    const pool = { ...POOL, workers: 2, minTaskItems };
    const generation = new Generation(index, "1", { settings: SETTINGS, shards: index.shards, pool });
    const sequential = (await throughput(generation, batches, 1)).rate;
    const concurrent = (await throughput(generation, batches, CONCURRENCY)).rate;
    const row = { events: size, minTaskItems, sequential, concurrent };
    results.granularity.push(row);
    log("granularity", row);
    await generation.close();
  }
}

async function postgisRate(
  columns: CatalogColumns,
  size: number,
  index: IndexBuffers,
  batches: MatchQuery[][],
) {
  const baseline = await loadPostgis(testDatabaseUrl(), columns, SETTINGS);
  try {
    const sample = batches.slice(0, POSTGIS_BATCHES);
    await baseline.match(sample[0] ?? []);
    let started = performance.now();
    const answers: Awaited<ReturnType<typeof baseline.match>>[] = [];
    for (const batch of sample) answers.push(await baseline.match(batch));
    const sequential = (sample.length * 200) / ((performance.now() - started) / 1000);
    started = performance.now();
    await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        for (let i = lane; i < sample.length; i += 4) await baseline.match(sample[i] ?? []);
      }),
    );
    const concurrent = (sample.length * 200) / ((performance.now() - started) / 1000);
    const engine = new Generation(index, "1", {
      settings: SETTINGS,
      shards: index.shards,
      pool: { ...POOL, workers: 0 },
    });
    let same = 0;
    for (const [i, batch] of sample.entries()) {
      const expected = await engine.match(batch);
      expected.forEach((candidate, j) => {
        if (JSON.stringify(candidate) === JSON.stringify(answers[i]?.[j] ?? null)) same++;
      });
    }
    const row = {
      events: size,
      loadSeconds: Number(baseline.loadSeconds.toFixed(1)),
      sequential: Math.round(sequential),
      concurrent: Math.round(concurrent),
      engineInline: (await throughput(engine, sample, 1)).rate,
      agreement: (100 * same) / (sample.length * 200),
    };
    results.postgis.push(row);
    log("postgis", row);
  } finally {
    await baseline.close();
  }
}

for (const size of sizes) {
  const catalog = generateCatalog(size, size);
  const batches = generateBatches(catalog, BATCHES, 7);
  let last: IndexBuffers | null = null;
  for (const shards of shardCounts) {
    const build = await timedBuild(catalog.columns, shards);
    const row = {
      events: size,
      shards,
      seconds: build.seconds,
      cpuSeconds: build.cpuSeconds,
      bytesPerEvent: Number((indexBytes(build.index) / size).toFixed(1)),
      peakRssMb: build.peakRssMb,
    };
    results.builds.push(row);
    log("build", row);
    await matchRates(build.index, size, shards, batches);
    last = build.index;
  }
  if (last === null) continue;
  if (size === 2_000_000) await granularity(last, size, batches);
  if (withPostgis) await postgisRate(catalog.columns, size, last, batches);
}

console.log(`\nwrote ${save(results, { settings: SETTINGS, batches: BATCHES, concurrency: CONCURRENCY })}\n`);
console.log(markdown(results));
process.exit(0);
