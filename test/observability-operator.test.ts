/**
 * What an operator sees of a server started on a fresh database, run as deployed (a child process on
 * PostgreSQL with request threads): each migration named in the log, the build in the start log,
 * `/v1/health` and `rollcall_build_info`, the key id in the access log, a key's last use, an exposition
 * `promtool check metrics` accepts, and a dashboard and alert rules that ask only for exported metrics.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { processEnv } from "../src/config.ts";
import { openStore, type Store } from "../src/store/db.ts";
import { createPartner, issueKey, listKeys } from "../src/store/keys.ts";
import { testDatabaseUrl } from "./support/environment.ts";
import { freePort } from "./support/processes.ts";
import { type ServiceProcess, startService } from "./support/serviceProcess.ts";

const root = join(import.meta.dir, "..");
const promtool = Bun.which("promtool");
if (promtool === null) {
  console.warn("promtool is not installed (Debian package prometheus): the promtool checks are skipped");
}

const databaseName = `rollcall_test_${randomBytes(6).toString("hex")}`;
let databaseUrl: string;
let service: ServiceProcess;
let store: Store;
let metricsUrl: string;
let key: string;
let keyId: string;

async function admin(statement: string): Promise<void> {
  const client = postgres(testDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    await client.unsafe(statement);
  } finally {
    await client.end();
  }
}

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${service.baseUrl}${path}`, { headers: { "x-partner-api-key": key, ...headers } });

/** The service's JSON log lines with the given event. */
function logged(event: string): Record<string, unknown>[] {
  return service
    .stderrLines()
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line["event"] === event);
}

/** Metric families of an exposition, by name, with their types. */
function families(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm))
    types.set(match[1] ?? "", match[2] ?? "");
  return types;
}

/** Every `rollcall_` metric a query text names, histogram series read as their family. */
function metricsNamedIn(text: string, exported: Map<string, string>): string[] {
  const names = [...text.matchAll(/\brollcall_[a-z0-9_]+/g)].map(([name]) => name);
  return names.map((name) => {
    const family = name.replace(/_(bucket|sum|count)$/, "");
    return exported.get(family) === "histogram" ? family : name;
  });
}

const expectedBuild = () => {
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  const git = existsSync(join(root, ".git"))
    ? spawnSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" })
    : null;
  return { version, commit: git?.status === 0 ? git.stdout.trim() : null };
};

beforeAll(async () => {
  await admin(`create database ${databaseName}`);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  service = await startService(
    { DATABASE_URL: databaseUrl, METRICS_PORT: String(metricsPort), REQUEST_THREADS: "2", WORKERS: "0" },
    { startTimeoutMs: 60_000 },
  );
  store = await openStore({ databaseUrl, dataDir: "", migrate: false });
  await createPartner(store, { id: "acme", name: "Acme" });
  const issued = await issueKey(store, { partnerId: "acme", environment: "sandbox", label: null });
  key = issued.key;
  keyId = issued.row.id;
  expect((await get("/v1/health")).status).toBe(200);
  expect((await get("/v1/no-such-path")).status).toBe(404);
  expect((await get("/v1/ping")).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await store?.close();
  const code = await service?.stop();
  await admin(`drop database if exists ${databaseName} with (force)`);
  expect(code).toBe(0);
});

describe("the build and the schema", () => {
  test("a fresh database is migrated at start, each migration named in the log in order", () => {
    const journal = JSON.parse(readFileSync(join(root, "drizzle", "meta", "_journal.json"), "utf8")) as {
      entries: { tag: string }[];
    };
    const applied = logged("migration_applied").map((line) => line["migration"]);
    expect(applied).toEqual(journal.entries.map((entry) => entry.tag));
  });

  test("the start log, /v1/health and rollcall_build_info name the build", async () => {
    const build = expectedBuild();
    expect(logged("started")[0]).toMatchObject(build);
    const health = (await (await get("/v1/health")).json()) as { build: unknown };
    expect(health.build).toEqual(build);
    const exposition = await (await fetch(metricsUrl)).text();
    expect(exposition).toContain(
      `rollcall_build_info{version="${build.version}",commit="${build.commit ?? ""}"} 1`,
    );
  });
});

describe("keys", () => {
  test("the access log names the key a request used, never the key itself", () => {
    const health = logged("request").find((line) => line["route"] === "/v1/health");
    expect(health).toMatchObject({ partner: "acme", keyId, status: 200 });
    const unknown = logged("request").find((line) => line["route"] === "unmatched");
    expect(unknown).toMatchObject({ partner: null, keyId: null });
    expect(service.stderrLines().join("\n")).not.toContain(key);
  });

  test("keys list shows when the key was last used, to within a minute", async () => {
    const before = new Date();
    expect((await get("/v1/health")).status).toBe(200);
    const deadline = performance.now() + 10_000;
    let lastUsed: Date | null = null;
    while (lastUsed === null && performance.now() < deadline) {
      lastUsed = (await listKeys(store, "acme"))[0]?.lastUsedAt ?? null;
      if (lastUsed === null) await Bun.sleep(50);
    }
    // Written by the first request's authentication (beforeAll), at most a minute before this one.
    expect(lastUsed?.getTime()).toBeLessThanOrEqual(before.getTime() + 1000);
    expect(lastUsed?.getTime()).toBeGreaterThan(before.getTime() - 60_000);
    const listed = Bun.spawnSync(["bun", "src/cli/index.ts", "keys", "list", "acme", "--json"], {
      cwd: root,
      env: { ...processEnv(), DATABASE_URL: databaseUrl },
    });
    expect(listed.exitCode).toBe(0);
    const keys = JSON.parse(listed.stdout.toString()) as { id: string; last_used_at: string | null }[];
    expect(keys).toEqual([expect.objectContaining({ id: keyId, last_used_at: lastUsed?.toISOString() })]);
  });
});

describe("metrics", () => {
  test("counters end in _total and nothing else does", async () => {
    const exported = families(await (await fetch(metricsUrl)).text());
    expect(exported.size).toBeGreaterThan(20);
    const misnamed = [...exported].filter(([name, type]) => name.endsWith("_total") !== (type === "counter"));
    expect(misnamed).toEqual([]);
  });

  test.skipIf(promtool === null)("promtool check metrics accepts the exposition", async () => {
    const exposition = await (await fetch(metricsUrl)).text();
    const check = spawnSync(promtool ?? "promtool", ["check", "metrics"], {
      input: exposition,
      encoding: "utf8",
    });
    expect(`${check.stdout}${check.stderr}`).toBe("");
    expect(check.status).toBe(0);
  });

  test("every query of the Grafana dashboard and the alert rules names metrics the service exports", async () => {
    const exported = families(await (await fetch(metricsUrl)).text());
    const dashboard = JSON.parse(readFileSync(join(root, "deploy", "grafana-dashboard.json"), "utf8")) as {
      panels: { id: number; type: string; targets?: { expr: string }[] }[];
    };
    const queries = dashboard.panels
      .filter((panel) => panel.type !== "row")
      .flatMap((panel) => panel.targets ?? []);
    expect(queries.length).toBeGreaterThan(15);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const rules = readFileSync(join(root, "deploy", "prometheus-rules.yml"), "utf8");
    const named = [
      ...queries.flatMap((query) => metricsNamedIn(query.expr, exported)),
      ...metricsNamedIn(rules, exported),
    ];
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((name) => !exported.has(name))).toEqual([]);
  });
});
