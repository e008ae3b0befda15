import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { processEnv } from "../src/config.ts";
import { generateCatalog } from "../src/store/catalog/generate/index.ts";
import { loadActiveKeys, matchActiveKey } from "../src/store/keys.ts";
import { migrationsFolder } from "../src/store/migrations.ts";
import { type CliResult as Result, runCli } from "./support/cli.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

/** The operator CLI end to end: a real child process against a test database. */

let database: TestDatabase;
let dir: string;

function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return runCli(database.url, args, env);
}

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

async function count(table: "events" | "venues" | "performers"): Promise<number> {
  const [row] = await database.store.rows<{ count: number }>(
    sql`select count(*)::int as count from ${sql.raw(table)}`,
  );
  return row?.count ?? -1;
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "rollcall-cli-"));
});

afterAll(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("partners", () => {
  test("create, refuse a duplicate, list as JSON", async () => {
    const created = await cli(["partners", "create", "acme", "--name", "Acme Inc"]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toContain("Created partner acme (Acme Inc).");
    const again = await cli(["partners", "create", "acme"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("partner acme already exists");
    const listed = await cli(["partners", "list", "--json"]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: "acme",
        name: "Acme Inc",
        created_at: expect.stringMatching(/Z$/),
        ingest_limit: null,
        read_limit: null,
        write_limit: null,
      },
    ]);
  });

  test("a malformed partner id is a usage error", async () => {
    const result = await cli(["partners", "create", "Acme-Inc"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("usage: bun run cli partners create <partner_id> [--name NAME]");
  });
});

/** The active sandbox key a presented key is, as the service finds it. */
const activeSandboxKey = async (key: string) =>
  matchActiveKey(await loadActiveKeys(database.store, "sandbox"), key);

describe("keys", () => {
  test("issue prints the key alone on the last line; list never shows it; revoke disables it", async () => {
    const issued = await cli(["keys", "issue", "acme", "--env", "sandbox", "--label", "ci"]);
    expect(issued.code).toBe(0);
    const key = lastLine(issued.stdout);
    expect(key).toMatch(/^acme-[A-Za-z0-9_-]{43}$/);
    const row = await activeSandboxKey(key);
    expect(row).toMatchObject({ partnerId: "acme", environment: "sandbox" });

    const listed = await cli(["keys", "list", "acme", "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.slice(5));
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: row?.id,
        environment: "sandbox",
        label: "ci",
        created_at: expect.any(String),
        revoked_at: null,
        last_used_at: null,
      },
    ]);
    const text = await cli(["keys", "list", "acme"]);
    expect(text.stdout).toContain(row?.id ?? "missing");
    expect(text.stdout.split("\n")[0]).toContain("LAST USED");
    expect(text.stdout).toContain("never");
    expect(text.stdout).not.toContain(key.slice(5));

    const revoked = await cli(["keys", "revoke", row?.id ?? ""]);
    expect(revoked.code).toBe(0);
    expect(await activeSandboxKey(key)).toBeNull();
    const after = JSON.parse((await cli(["keys", "list", "acme", "--json"])).stdout);
    expect(after[0].revoked_at).toMatch(/Z$/);
  });

  test("wrong arguments exit 2, failures exit 1", async () => {
    const staging = await cli(["keys", "issue", "acme", "--env", "staging"]);
    expect([staging.code, staging.stderr]).toEqual([2, expect.stringContaining('got "staging"')]);
    const noEnv = await cli(["keys", "issue", "acme"]);
    expect([noEnv.code, noEnv.stderr]).toEqual([2, expect.stringContaining("--env is required")]);
    expect((await cli(["keys", "issue", "acme", "--env", "sandbox", "--bogus"])).code).toBe(2);
    expect((await cli(["keys", "revoke", "not-a-uuid"])).code).toBe(2);
    // No partner could have these ids: a usage error, not "no partner (create it with: …)".
    expect((await cli(["keys", "issue", "ACME", "--env", "sandbox"])).code).toBe(2);
    expect((await cli(["keys", "list", "BAD-ID"])).code).toBe(2);
    for (const label of ["two\nlines", "right\u202eleft", "line\u2028separator"]) {
      expect((await cli(["keys", "issue", "acme", "--env", "sandbox", "--label", label])).code).toBe(2);
    }
    const unknownPartner = await cli(["keys", "issue", "nobody", "--env", "production"]);
    expect(unknownPartner.code).toBe(1);
    expect(unknownPartner.stderr).toContain("no partner nobody");
    expect((await cli(["keys", "list", "nobody"])).code).toBe(1);
    expect((await cli(["keys", "revoke", "00000000-0000-0000-0000-000000000000"])).code).toBe(1);
  });
});

describe("catalog", () => {
  test("generate into a full device fails with a message and exit 1", async () => {
    const child = Bun.spawn(["bun", "src/cli/index.ts", "catalog", "generate", "--events", "5"], {
      env: { ...processEnv(), DATABASE_URL: database.url, CI: "1" },
      stdout: Bun.file("/dev/full"),
      stderr: "pipe",
    });
    const timer = setTimeout(() => child.kill(), 20_000);
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(stderr).toContain("cannot write the output");
  });

  test("generate writes the same catalog as the library; import loads it", async () => {
    const generated = await cli(["catalog", "generate", "--events", "300", "--seed", "5"]);
    expect(generated.code).toBe(0);
    const expected = [...generateCatalog({ events: 300, seed: 5 })];
    expect(generated.stdout).toBe(`${expected.join("\n")}\n`);
    const file = join(dir, "catalog.jsonl");
    writeFileSync(file, generated.stdout);
    const imported = await cli(["catalog", "import", file]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain("catalog version 1");
    expect(await count("events")).toBe(300);
  });

  test("import reads what is not a regular file: /dev/null is an empty catalog", async () => {
    const result = await cli(["catalog", "import", "/dev/null"]);
    expect([result.code, result.stderr]).toEqual([0, ""]);
  });

  test("a file with bad lines is rejected with their numbers and imports nothing", async () => {
    const file = join(dir, "bad.jsonl");
    const good = JSON.stringify({
      type: "venue",
      id: 9001,
      name: "New",
      city: null,
      country: "FR",
      latitude: 48.85,
      longitude: 2.35,
      timezone: "Europe/Paris",
    });
    writeFileSync(file, `${good}\n{"type":"venue"}\n${good.replace("Europe/Paris", "Europe/Atlantis")}\n`);
    const venues = await count("venues");
    const result = await cli(["catalog", "import", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("line 2: ");
    expect(result.stderr).toContain("line 3: timezone");
    expect(result.stderr).toContain("2 bad lines");
    expect(await count("venues")).toBe(venues);
  });

  test("usage errors: missing options, unreadable file", async () => {
    expect((await cli(["catalog", "generate"])).code).toBe(2);
    expect((await cli(["catalog", "generate", "--events", "ten"])).code).toBe(2);
    expect((await cli(["catalog", "import"])).code).toBe(2);
    expect((await cli(["catalog", "import", join(dir, "missing.jsonl")])).code).toBe(1);
    const directory = await cli(["catalog", "import", dir]);
    expect([directory.code, directory.stderr.trim()]).toEqual([
      1,
      `error: ${dir} is a directory, not a catalog file`,
    ]);
  });
});

describe("migrate and status", () => {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  const tags = journal.entries.map((entry) => entry.tag);
  const emptyName = `rollcall_test_${randomBytes(6).toString("hex")}`;
  let emptyUrl = "";

  beforeAll(async () => {
    await database.store.rows(sql.raw(`create database ${emptyName}`));
    const url = new URL(database.url);
    url.pathname = `/${emptyName}`;
    emptyUrl = url.toString();
  });

  afterAll(async () => {
    await database.store.rows(sql.raw(`drop database if exists ${emptyName} with (force)`));
  });

  test("status on a database never migrated lists every migration pending and changes nothing", async () => {
    const status = await cli(["status"], { DATABASE_URL: emptyUrl });
    expect(status).toMatchObject({ code: 0, stderr: "" });
    expect(status.stdout).toMatch(/^version {3}\d+\.\d+\.\d+/);
    expect(status.stdout).toContain(
      `schema    0 of ${tags.length} migrations applied; pending: ${tags.join(", ")}`,
    );
    expect(status.stdout).toContain("catalog   unknown until the schema is migrated");
    const again = JSON.parse((await cli(["status", "--json"], { DATABASE_URL: emptyUrl })).stdout);
    expect(again.schema).toEqual({ applied: 0, latest: null, pending: tags });
  });

  test("migrate names each migration it applies; then status shows none pending", async () => {
    const migrated = await cli(["migrate"], { DATABASE_URL: emptyUrl });
    expect(migrated).toMatchObject({ code: 0, stderr: "" });
    expect(migrated.stdout.trimEnd().split("\n")).toEqual([
      ...tags.map((tag) => `applied ${tag}`),
      `schema up to date: ${tags.length} migrations, latest ${tags.at(-1)} (${tags.length} applied now)`,
    ]);
    const twice = await cli(["migrate"], { DATABASE_URL: emptyUrl });
    expect(twice.stdout).toContain("(0 applied now)");
    const status = JSON.parse((await cli(["status", "--json"], { DATABASE_URL: emptyUrl })).stdout);
    expect(status).toMatchObject({
      database: "postgres",
      schema: { applied: tags.length, latest: tags.at(-1), pending: [] },
      catalog: { version: "0", events: 0, venues: 0, imported_at: null },
      partners: { partners: 0, active_keys: { production: 0, sandbox: 0 } },
    });
  });

  test("status counts the catalog, the partners and their active keys", async () => {
    const status = JSON.parse((await cli(["status", "--json"])).stdout);
    expect(status.partners.partners).toBeGreaterThan(0);
    expect(status.catalog.events).toBe(await count("events"));
    expect(status.catalog.venues).toBe(await count("venues"));
    expect((await cli(["status", "extra"])).code).toBe(2);
  });
});

describe("the command line itself", () => {
  test("unknown commands and no command are usage errors; help is not", async () => {
    expect((await cli([])).code).toBe(2);
    expect((await cli(["teleport"])).code).toBe(2);
    expect((await cli(["partners", "delete"])).code).toBe(2);
    const help = await cli(["help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("keys issue <partner_id> --env production|sandbox [--label L]");
  });

  test("a bad configuration stops it with the variable named", async () => {
    const result = await cli(["partners", "list"], { PORT: "abc" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PORT");
  });
});
