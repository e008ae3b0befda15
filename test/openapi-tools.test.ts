/**
 * The OpenAPI document as partners' tools read it (docs/api.md §12): Redocly's recommended rules and
 * Spectral's `oas` rules report no errors on the served document, and a client generated from it with
 * openapi-typescript compiles, with openapi-fetch, calls written as the specification describes them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_PACKAGE, runTool, scratchFolder } from "./support/openapiTools.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
let scratch: ReturnType<typeof scratchFolder>;
let generated: Awaited<ReturnType<typeof runTool>>;

beforeAll(async () => {
  server = await startTestServer();
  const { sandbox } = await server.partner("tools");
  const response = await fetch(`${server.baseUrl}/v1/openapi.json`, {
    headers: { "x-partner-api-key": sandbox },
  });
  expect(response.status).toBe(200);
  scratch = scratchFolder({
    "openapi.json": await response.text(),
    "spectral.yaml": 'extends: ["spectral:oas"]\n',
    "calls.ts": SPEC_STYLE_CALLS,
    "tsconfig.json": JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "bundler",
        lib: ["ES2022", "DOM"],
        skipLibCheck: true,
      },
      files: ["calls.ts", "schema.ts"],
    }),
  });
  generated = await runTool("openapi-typescript", [
    join(scratch.dir, "openapi.json"),
    "-o",
    join(scratch.dir, "schema.ts"),
  ]);
});

afterAll(async () => {
  scratch?.remove();
  await server.close();
});

test("Redocly's recommended rules report no errors", async () => {
  const { code, stdout, stderr } = await runTool("redocly", [
    "lint",
    "--extends=recommended",
    "--format=json",
    join(scratch.dir, "openapi.json"),
  ]);
  const report = JSON.parse(stdout) as { totals: { errors: number }; problems: { ruleId: string }[] };
  expect({ errors: report.totals.errors, code, stderr: code === 0 ? "" : stderr }).toEqual({
    errors: 0,
    code: 0,
    stderr: "",
  });
});

test("Spectral's oas rules report no errors", async () => {
  const { stdout } = await runTool("spectral", [
    "lint",
    join(scratch.dir, "openapi.json"),
    "--ruleset",
    join(scratch.dir, "spectral.yaml"),
    "--format",
    "json",
    "--quiet",
  ]);
  const results = JSON.parse(stdout) as { code: string; severity: number; path: string[] }[];
  // Severity 0 is an error; warnings (contact details, say) are advice.
  expect(results.filter((result) => result.severity === 0)).toEqual([]);
});

test("a client generated from the document compiles the calls the specification describes, and refuses others", async () => {
  expect({ code: generated.code, stderr: generated.code === 0 ? "" : generated.stderr }).toEqual({
    code: 0,
    stderr: "",
  });
  const compiled = await runTool("tsc", ["-p", join(scratch.dir, "tsconfig.json")]);
  expect({ code: compiled.code, output: compiled.stdout }).toEqual({ code: 0, output: "" });
});

test("the TypeScript client's committed types are those generated from the served document", () => {
  const committed = readFileSync(join(CLIENT_PACKAGE, "src/schema.ts"), "utf8");
  const generated = readFileSync(join(scratch.dir, "schema.ts"), "utf8");
  // Regenerate with `npx bun clients/typescript/scripts/generate.ts` after changing a route's schemas.
  expect(committed === generated).toBe(true);
});

/**
 * Calls as the specification writes them: a base address holding `/v1` and paths relative to it,
 * `limit: 7`, `include_media: false`, no body on sync-complete, hide and unhide, null media members.
 * Each `@ts-expect-error` line must fail to compile, or tsc reports the directive as unused: the types
 * are as narrow as the service.
 */
const SPEC_STYLE_CALLS = `
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Event = components["schemas"]["Event"];
type Venue = components["schemas"]["Venue"];
type MediaItem = components["schemas"]["MediaItem"];
type ApiError = components["schemas"]["Error"];

const client = createClient<paths>({
  baseUrl: "https://sandbox.rollcall.example/v1",
  headers: { "X-PARTNER-API-KEY": "acme-secret" },
});
const user_id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

export async function specStyle(): Promise<void> {
  await client.GET("/ping");
  const created = await client.POST("/users", { body: { email: "ana@example.com", partner_user_id: "p-1" } });
  if (created.data) created.data.existing satisfies boolean;

  const item: MediaItem = {
    id: "IMG_0001",
    taken_at: "2025-07-16T21:15:00+09:00",
    latitude: 37.5155,
    longitude: 127.0726,
    media_type: "video",
    duration_seconds: 12.5,
    thumbnail_url: null,
    filename: null,
  };
  const batch = await client.POST("/users/{user_id}/media", { params: { path: { user_id } }, body: { media: [item] } });
  for (const rejection of batch.data?.rejected ?? []) {
    rejection.reason satisfies "missing_coordinates" | "missing_taken_at" | "invalid";
    rejection.detail satisfies string;
  }

  await client.POST("/users/{user_id}/sync-complete", { params: { path: { user_id } } });
  await client.POST("/users/{user_id}/sync-complete", { params: { path: { user_id } }, body: { photos_processed: 120 } });

  const page = await client.GET("/users/{user_id}/events", {
    params: { path: { user_id }, query: { limit: 7, include_media: false, min_confidence: 0.5, cursor: "c" } },
  });
  const events: Event[] = page.data?.events ?? [];
  const venue: Venue | undefined = events[0]?.venue;
  page.data?.next_cursor satisfies string | null | undefined;
  if (page.error) page.error.error.code satisfies ApiError["error"]["code"];
  void venue;

  const stats = await client.GET("/users/{user_id}/stats", { params: { path: { user_id }, query: { top: 10 } } });
  stats.data?.last_sync_at satisfies string | null | undefined;

  await client.POST("/users/{user_id}/events/{event_id}/hide", { params: { path: { user_id, event_id: 2180 } } });
  await client.POST("/users/{user_id}/events/{event_id}/unhide", { params: { path: { user_id, event_id: 2180 } } });
  await client.POST("/users/{user_id}/media/delete", { params: { path: { user_id } }, body: { ids: ["IMG_0001"] } });
  await client.GET("/users/{user_id}/export", { params: { path: { user_id } } });
  await client.DELETE("/users/{user_id}", { params: { path: { user_id } } });
  await client.GET("/health");
}

export async function refused(): Promise<void> {
  // @ts-expect-error the version prefix is part of the base address, not of a path
  await client.GET("/v1/ping");
  // @ts-expect-error limit is an integer
  await client.GET("/users/{user_id}/events", { params: { path: { user_id }, query: { limit: "7" } } });
  // @ts-expect-error include_media is a boolean
  await client.GET("/users/{user_id}/events", { params: { path: { user_id }, query: { include_media: "false" } } });
  // @ts-expect-error a media batch needs its media
  await client.POST("/users/{user_id}/media", { params: { path: { user_id } }, body: {} });
  // @ts-expect-error media_type is photo or video
  const gif: MediaItem = { id: "a", media_type: "gif" };
  // @ts-expect-error a misspelt member is caught: the document's objects are closed to unknown members
  const misspelt: MediaItem = { id: "a", taken_att: "2025-07-16T21:15:00Z" };
  // @ts-expect-error an error code the 404 of the history cannot carry
  const wrongCode: NonNullable<Awaited<ReturnType<typeof notFoundCode>>> = "invalid_email";
  void [gif, misspelt, wrongCode];
}

async function notFoundCode() {
  const { error, response } = await client.GET("/users/{user_id}/events", { params: { path: { user_id } } });
  return response.status === 404 ? error?.error.code : undefined;
}
`;
