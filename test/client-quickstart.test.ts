/** The README's partner quick start, run as written against a real rollcall, prints what the README says. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { seedCatalog } from "./support/catalogFixtures.ts";
import { REPOSITORY, scratchFolder } from "./support/openapiTools.ts";
import { run } from "./support/processes.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.partner("demo")).sandbox;
  // The demo catalog's show the quick start photographs (README, "A session with curl").
  await seedCatalog(server, {
    venues: [
      {
        id: 47,
        name: "Seoul Music Hall",
        latitude: 37.536484,
        longitude: 127.071198,
        timezone: "Asia/Seoul",
        city: "Seoul",
        country: "KR",
      },
    ],
    events: [
      { id: 174, venueId: 47, name: "Atomic Echoes: World Tour", startsAtLocal: "2025-07-16T20:00:00" },
    ],
  });
});

afterAll(async () => {
  await server.close();
});

/** The README's quick start: its TypeScript, and the output its shell block shows as comments. */
function quickStart(): { code: string; output: string[] } {
  const readme = readFileSync(join(REPOSITORY, "README.md"), "utf8");
  const section = readme.split("## Partner quick start")[1]?.split("\n## ")[0] ?? "";
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const shell = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const output = shell
    .split("\n")
    .filter((line) => line.startsWith("# "))
    .map((line) => line.slice(2));
  return { code, output };
}

test("the README's partner quick start runs as written and prints what the README shows", async () => {
  const { code, output } = quickStart();
  expect(output.length).toBeGreaterThan(0);
  const scratch = scratchFolder({ "quickstart.ts": code });
  try {
    const result = await run([process.execPath, join(scratch.dir, "quickstart.ts")], 60_000, {
      ...process.env,
      ROLLCALL_BASE_URL: `${server.baseUrl}/v1`,
      ROLLCALL_API_KEY: key,
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout.trimEnd().split("\n")).toEqual(output);
  } finally {
    scratch.remove();
  }
});
