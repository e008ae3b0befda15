/**
 * Readiness tells the truth (docs/operations.md, readiness): the service, run as a process on request
 * threads, is not ready while its requests cannot get a database connection in time, and ready again
 * once they can, with no restart. Here every connection waits on a table an operator locked.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { createPartner, issueKey } from "../src/store/keys.ts";
import { event, venue } from "./support/catalogImport.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { lockTable } from "./support/heldTransactions.ts";
import { type ServiceProcess, startService } from "./support/serviceProcess.ts";

let database: TestDatabase;
let service: ServiceProcess;
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  await createPartner(database.store, { id: "acme", name: "acme" });
  key = (await issueKey(database.store, { partnerId: "acme", environment: "sandbox", label: null })).key;
  service = await startService({ DATABASE_URL: database.url, REQUEST_THREADS: "2", DATABASE_POOL_SIZE: "6" });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await database?.drop();
}, 30_000);

async function readiness(): Promise<{ status: number; reasons: string[] }> {
  const response = await fetch(`${service.baseUrl}/readyz`);
  const body = (await response.json()) as { reasons?: string[] };
  return { status: response.status, reasons: body.reasons ?? [] };
}

/** Polls /readyz until it answers `status`, for at most `withinMs`; resolves with the time it took. */
async function readyzBecomes(status: number, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if ((await readiness()).status === status) return performance.now() - started;
    await Bun.sleep(100);
  }
  throw new Error(
    `/readyz did not answer ${status} within ${withinMs} ms: ${JSON.stringify(await readiness())}`,
  );
}

test("not ready on an empty catalog, with the reason; ready once an import reaches the index", async () => {
  expect(await readiness()).toEqual({ status: 503, reasons: ["catalog_empty"] });
  const lines = [venue(1, "Etc/UTC"), event(1, 1, "2025-06-01T20:00:00")];
  expect((await importCatalog(database.store, memoryLines(lines, 2))).ok).toBe(true);
  await readyzBecomes(200, 15_000);
});

test("not ready while no connection can be had in time, ready again once one can", async () => {
  expect(await readiness()).toEqual({ status: 200, reasons: [] });
  const unlock = await lockTable(database.url, "users");
  // Requests from every side of the service, each holding a connection while the lock stands.
  const stuck = Array.from({ length: 24 }, (_, i) =>
    fetch(`${service.baseUrl}/v1/users`, {
      method: "POST",
      headers: { "x-partner-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ email: `stuck${i}@example.com` }),
    }).then((response) => response.status),
  );
  try {
    await readyzBecomes(503, 6_000);
    expect((await readiness()).reasons).toContain("database_unavailable");
  } finally {
    await unlock();
  }
  await readyzBecomes(200, 5_000);
  expect(await Promise.all(stuck)).not.toContain(0);
  const created = await fetch(`${service.baseUrl}/v1/users`, {
    method: "POST",
    headers: { "x-partner-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ email: "after@example.com" }),
  });
  expect(created.status).toBe(201);
}, 60_000);
