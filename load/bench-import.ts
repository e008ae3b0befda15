import { randomBytes } from "node:crypto";
import { rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { generateCatalog } from "../src/store/catalog/generate/index.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { fileLines } from "../src/store/catalog/lines.ts";
import { openStore } from "../src/store/db.ts";
import { testDatabaseUrl } from "../test/support/environment.ts";
import { integer, parseOrExplain, UsageError } from "./args.ts";

/**
 * Catalog benchmark: generates N events into a file under the temp directory, imports it into a
 * throwaway database on the test PostgreSQL server (TEST_DATABASE_URL, DATABASE_URL or the local
 * default), optionally imports it again unchanged, and prints the times and rates.
 *
 *   bun run bench -- --events 1000000 [--seed 1] [--reimport] [--keep-file]
 */

const USAGE = "usage: bun run bench -- [--events N] [--seed S] [--reimport] [--keep-file]";

function parseOptions() {
  const { values } = parseOrExplain({
    args: process.argv.slice(2),
    options: {
      events: { type: "string", default: "1000000" },
      seed: { type: "string", default: "1" },
      reimport: { type: "boolean", default: false },
      "keep-file": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return null;
  return {
    events: integer("events", values.events, 1, 10_000_000),
    seed: integer("seed", values.seed, 0, 2 ** 31 - 1),
    reimport: values.reimport,
    keepFile: values["keep-file"],
  };
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

const seconds = (since: number) => (performance.now() - since) / 1000;
const rate = (count: number, elapsed: number) => Math.round(count / elapsed).toLocaleString("en-US");
const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MiB`;

async function generate(path: string, events: number, seed: number): Promise<void> {
  const writer = Bun.file(path).writer({ highWaterMark: 1 << 20 });
  let buffer = "";
  for (const line of generateCatalog({ events, seed })) {
    buffer += `${line}\n`;
    if (buffer.length >= 1 << 20) {
      writer.write(buffer);
      buffer = "";
    }
  }
  writer.write(buffer);
  await writer.end();
}

async function importOnce(url: string, path: string, events: number, label: string): Promise<void> {
  const store = await openStore({ databaseUrl: url, dataDir: "" });
  try {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const report = await importCatalog(store, fileLines(path));
    const elapsed = seconds(started);
    const cpu = process.cpuUsage(cpuBefore);
    if (!report.ok) throw new Error(`import rejected the file: ${JSON.stringify(report.errors.slice(0, 5))}`);
    const { inserted, updated, unchanged } = report.events;
    console.log(
      `${label}: ${elapsed.toFixed(1)} s, ${rate(events, elapsed)} events/s ` +
        `(${inserted} new, ${updated} changed, ${unchanged} unchanged); ` +
        `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of Bun CPU`,
    );
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === null) {
    console.log(USAGE);
    return;
  }
  const path = join(tmpdir(), `rollcall-bench-${options.events}-${options.seed}.jsonl`);
  const started = performance.now();
  await generate(path, options.events, options.seed);
  const generated = seconds(started);
  console.log(
    `generate: ${options.events} events, ${mib(statSync(path).size)} in ${generated.toFixed(1)} s, ` +
      `${rate(options.events, generated)} events/s -> ${path}`,
  );

  const admin = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
  const name = `rollcall_bench_${randomBytes(4).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  try {
    const url = withDatabase(testDatabaseUrl(), name);
    await importOnce(url, path, options.events, "import");
    if (options.reimport) await importOnce(url, path, options.events, "re-import (unchanged)");
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
    if (!options.keepFile) rmSync(path, { force: true });
  }
  console.log(`peak RSS: ${mib(process.resourceUsage().maxRSS * 1024)}`);
}

try {
  await main();
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n${USAGE}`);
  process.exitCode = 2;
}
