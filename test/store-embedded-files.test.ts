/** The embedded database's files are private to the service's user: no group or other permission bit. */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/store/db.ts";
import { createPartner, listPartners } from "../src/store/keys.ts";

const root = mkdtempSync(join(tmpdir(), "rollcall-embedded-files-"));

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Every path under `dir` (itself included) whose mode lets group or others in, with that mode. */
function shared(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stats = lstatSync(path);
    if (stats.isSymbolicLink()) return;
    if ((stats.mode & 0o077) !== 0) found.push(`${path} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

const modeOf = (path: string) => lstatSync(path).mode & 0o777;

describe("embedded database files", () => {
  test("a new data directory is 0700 and nothing in it is open to group or others, open or closed", async () => {
    const dataDir = join(root, "fresh", ".data");
    const store = await openStore({ databaseUrl: null, dataDir });
    try {
      await createPartner(store, { id: "acme", name: "Acme" });
      expect(modeOf(dataDir)).toBe(0o700);
      expect(shared(dataDir)).toEqual([]);
    } finally {
      await store.close();
    }
    expect(readdirSync(dataDir).length).toBeGreaterThan(10);
    expect(shared(dataDir)).toEqual([]);
  });

  test("an existing directory with loose modes is tightened on open, and its data is still there", async () => {
    const dataDir = join(root, "loose");
    const first = await openStore({ databaseUrl: null, dataDir });
    await createPartner(first, { id: "acme", name: "Acme" });
    await first.close();
    // As an older version left it: PGlite's own 0666 files in a world-readable directory.
    chmodSync(dataDir, 0o777);
    mkdirSync(join(dataDir, "stray"), { mode: 0o755 });
    writeFileSync(join(dataDir, "stray", "file"), "x", { mode: 0o666 });
    chmodSync(join(dataDir, "stray", "file"), 0o666);
    chmodSync(join(dataDir, "PG_VERSION"), 0o666);
    expect(shared(dataDir).length).toBeGreaterThan(0);
    const again = await openStore({ databaseUrl: null, dataDir });
    try {
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(join(dataDir, "stray", "file"))).toBe(0o600);
      expect(shared(dataDir)).toEqual([]);
      expect((await listPartners(again)).map((partner) => partner.id)).toEqual(["acme"]);
    } finally {
      await again.close();
    }
    expect(shared(dataDir)).toEqual([]);
  });
});
