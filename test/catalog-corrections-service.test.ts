/**
 * Contract §15 end to end, as an operator meets it: a running service, feed pages imported by the CLI, a
 * user's photo kept at a show, then a page that reschedules the show a week later. The service places
 * the photo again by itself: the show leaves the user's history, and `catalog status` says nothing is left.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPartner, issueKey } from "../src/store/keys.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { type ServiceProcess, startService } from "./support/serviceProcess.ts";

const PAGE = join(import.meta.dir, "fixtures", "feeds", "ticketmaster-page.json");
/** Madison Square Garden, where the page's first show plays on 2025-07-04 at 20:00 New York time. */
const GARDEN = { latitude: 40.7505005, longitude: -73.9916006 };

let database: TestDatabase;
let service: ServiceProcess;
let key: string;
let scratch: string;

beforeAll(async () => {
  database = await createTestDatabase();
  scratch = mkdtempSync(join(tmpdir(), "rollcall-corrections-"));
  await createPartner(database.store, { id: "acme", name: "acme" });
  key = (await issueKey(database.store, { partnerId: "acme", environment: "sandbox", label: null })).key;
  const imported = await runCli(database.url, ["catalog", "import", "--format", "ticketmaster", PAGE]);
  expect(imported.code).toBe(0);
  service = await startService({ DATABASE_URL: database.url, CATALOG_POLL_SECONDS: "1" });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await database?.drop();
  rmSync(scratch, { recursive: true, force: true });
}, 30_000);

async function api(method: string, path: string, sent?: unknown) {
  const response = await fetch(`${service.baseUrl}/v1${path}`, {
    method,
    headers: { "x-partner-api-key": key, "content-type": "application/json" },
    body: sent === undefined ? undefined : JSON.stringify(sent),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and assert on their shape.
  const body: any = await response.json();
  return { status: response.status, body };
}

test("a show rescheduled by a feed page leaves the history of the user who photographed it", async () => {
  const user = (await api("POST", "/users", { email: "fan@example.com" })).body.user_id as string;
  const sent = await api("POST", `/users/${user}/media`, {
    media: [{ id: "IMG_1", taken_at: "2025-07-04T21:30:00-04:00", ...GARDEN }],
  });
  expect(sent.body.matched).toBe(1);
  const history = async () =>
    ((await api("GET", `/users/${user}/events?include_media=false`)).body.events as { name: string }[]).map(
      (event) => event.name,
    );
  expect(await history()).toEqual(["The Example Band"]);

  const page = JSON.parse(readFileSync(PAGE, "utf8"));
  const show = page._embedded.events[0];
  show.dates.start.localDate = "2025-07-11";
  show.dates.status.code = "rescheduled";
  const corrected = join(scratch, "corrected.json");
  writeFileSync(corrected, JSON.stringify(page));
  const imported = await runCli(database.url, ["catalog", "import", "--format", "ticketmaster", corrected]);
  expect(imported.code).toBe(0);
  expect(imported.stdout).toContain("1 events corrected");

  const started = performance.now();
  while ((await history()).length > 0 && performance.now() - started < 20_000) await Bun.sleep(200);
  expect(await history()).toEqual([]);
  const stats = await api("GET", `/users/${user}/stats`);
  expect(stats.body.events_count).toBe(0);
  const status = await runCli(database.url, ["catalog", "status"]);
  expect(status.stdout).toContain("none pending");
  const applied = service
    .stderrLines()
    .find((line) => line.includes('"event":"catalog_corrections_applied"'));
  expect(JSON.parse(applied ?? "{}")).toMatchObject({ events: 1, items: 1, removed: 1 });
}, 60_000);
