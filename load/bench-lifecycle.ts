import { parseArgs } from "node:util";
import { openStore } from "../src/store/db.ts";
import { createPartner, issueKey } from "../src/store/keys.ts";
import {
  BENCH_PARTNER,
  freshBatches,
  memoryOf,
  resetPeak,
  seededUser,
  summary,
} from "./bench/lifecycleFixture.ts";
import { importGeneratedCatalog } from "./bench/writeFixture.ts";
import { describeMachine } from "./report/machine.ts";
import { writeResultJson } from "./report/write.ts";
import { openLoadDatabase } from "./target/database.ts";
import { startServer } from "./target/server.ts";
import { readCatalogSample } from "./traffic/sample.ts";

/**
 * The targets of the data-lifecycle operations (docs/api.md §16), on a server process of its own:
 * - deleting 200 items against sending 200 new matching items, alternately, for users of several sizes
 *   (each deletion takes back the batch just sent, so the user's size stays put);
 * - exporting a user with `--big` kept items: the growth of the server's peak resident memory;
 * - erasing a user with `--big` kept items, while another user's batches go on: the erasure's time and
 *   the slowest of those batches.
 */
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rounds: { type: "string", default: "30" },
    big: { type: "string", default: "200000" },
    sizes: { type: "string", default: "1000,20000" },
  },
  strict: true,
});
const rounds = Number(values.rounds);
const big = Number(values.big);
const sizes = [...values.sizes.split(",").map(Number), big];

const database = await openLoadDatabase(null);
const store = await openStore({ databaseUrl: database.url, dataDir: "", poolSize: 4 });
const log = (line: string) => console.log(`[bench-lifecycle] ${line}`);

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

try {
  await importGeneratedCatalog(store, 20_000, 1);
  await createPartner(store, { id: BENCH_PARTNER, name: "Lifecycle bench" });
  const { key } = await issueKey(store, { partnerId: BENCH_PARTNER, environment: "sandbox", label: null });
  const sample = await readCatalogSample(store, 20_000, 1);
  const users: Record<number, string> = {};
  for (const size of sizes) {
    log(`seeding a user with ${size} kept items`);
    users[size] = await seededUser(store, sample, `size-${size}`, size);
  }
  log(`seeding the user to erase (${big} kept items) and a neighbour`);
  const erasee = await seededUser(store, sample, "erasee", big);
  const neighbour = await seededUser(store, sample, "neighbour", 1000);
  await store.client?.unsafe("vacuum analyze");

  const server = await startServer(
    "src/main.ts",
    { DATABASE_URL: database.url, SERVICE_ENVIRONMENT: "sandbox", DEMO: "false", LOG_LEVEL: "warn" },
    { label: "bench-lifecycle", readyTimeoutMs: 120_000 },
  );
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.baseUrl}/v1${path}`, {
      method,
      headers: { "x-partner-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  try {
    const deleteVsSend: Record<string, unknown> = {};
    for (const size of sizes) {
      const userId = users[size] as string;
      const batches = freshBatches(sample, size + 7, rounds + 3, `new-${size}`);
      const sends: number[] = [];
      const deletions: number[] = [];
      let matched = 0;
      for (const [round, batch] of batches.entries()) {
        const sent = await timed(() => call("POST", `/users/${userId}/media`, { media: batch }));
        const ids = batch.map((item) => item.id);
        const deleted = await timed(() => call("POST", `/users/${userId}/media/delete`, { ids }));
        if (round < 3) continue; // warm-up: plans, caches, connections
        sends.push(sent.ms);
        deletions.push(deleted.ms);
        matched += sent.value.matched;
        if (deleted.value.deleted.length !== sent.value.matched)
          throw new Error("a deletion missed kept items");
      }
      deleteVsSend[size] = {
        send: summary(sends),
        delete: summary(deletions),
        matchedPerBatch: matched / rounds,
      };
      log(
        `user of ${size}: send ${JSON.stringify(summary(sends))} delete ${JSON.stringify(summary(deletions))}`,
      );
    }

    await call("GET", `/users/${users[sizes[0] ?? big]}/export`);
    const before = memoryOf(server.pid);
    resetPeak(server.pid);
    // What the export's collections (src/http/userExport.ts) cost the other requests: pings meanwhile.
    const pings: number[] = [];
    let exporting = true;
    const pingLoop = (async () => {
      while (exporting) {
        pings.push((await timed(() => fetch(`${server.baseUrl}/v1/ping`).then((r) => r.text()))).ms);
        await Bun.sleep(5);
      }
    })();
    const exported = await timed(async () => {
      const response = await fetch(`${server.baseUrl}/v1/users/${users[big]}/export`, {
        headers: { "x-partner-api-key": key },
      });
      let bytes = 0;
      let tail = "";
      for await (const chunk of response.body ?? []) {
        bytes += chunk.byteLength;
        tail = new TextDecoder().decode(chunk.slice(-2));
      }
      return { bytes, complete: tail === "]}" };
    });
    const after = memoryOf(server.pid);
    exporting = false;
    await pingLoop;
    const exportResult = {
      items: big,
      ms: Math.round(exported.ms),
      bytes: exported.value.bytes,
      complete: exported.value.complete,
      rssBeforeMb: Math.round(before.rss / 2 ** 20),
      peakGrowthMb: Math.round(((after.peak - before.rss) / 2 ** 20) * 10) / 10,
      pingsDuringMs: summary(pings),
    };
    log(`export: ${JSON.stringify(exportResult)}`);

    const neighbourBatches = freshBatches(sample, 99, 400, "neighbour-new");
    const neighbourMs: { at: number; ms: number }[] = [];
    let erasing = true;
    const neighbourLoop = (async () => {
      for (const batch of neighbourBatches) {
        if (!erasing) break;
        const sent = await timed(() => call("POST", `/users/${neighbour}/media`, { media: batch }));
        neighbourMs.push({ at: performance.now(), ms: sent.ms });
      }
    })();
    await Bun.sleep(300);
    const erasedAt = performance.now();
    const erased = await timed(() => call("DELETE", `/users/${erasee}`));
    await Bun.sleep(300);
    erasing = false;
    await neighbourLoop;
    const during = neighbourMs.filter((s) => s.at >= erasedAt && s.at - s.ms <= erasedAt + erased.ms);
    const eraseResult = {
      items: big,
      ms: Math.round(erased.ms),
      neighbourBatchesDuring: summary(during.map((s) => s.ms)),
      neighbourBatchesOutside: summary(neighbourMs.filter((s) => !during.includes(s)).map((s) => s.ms)),
    };
    log(`erase: ${JSON.stringify(eraseResult)}`);

    const report = {
      options: { rounds, big, sizes },
      machine: await describeMachine(store.client),
      deleteVsSendMs: deleteVsSend,
      export: exportResult,
      erase: eraseResult,
    };
    log(`wrote ${writeResultJson("bench-lifecycle", report)}`);
  } finally {
    await server.stop();
  }
} finally {
  await store.close();
  await database.release();
}
