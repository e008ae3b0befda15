import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { onAdmin, openLoadDatabase } from "../load/target/database.ts";

/** A kept load database's life: built, reused, written to by a scenario, seeded again, dropped on change. */

const name = `rollcall_load_test_${randomBytes(6).toString("hex")}`;

afterAll(async () => {
  await onAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
});

describe("kept load databases", () => {
  test("a new name is created empty, and is only reused once its setup was marked complete", async () => {
    expect((await openLoadDatabase(name)).found).toBe("nothing");
    // Setup never finished (an interrupted run): the next run starts over.
    const again = await openLoadDatabase(name);
    expect(again.found).toBe("nothing");
    await again.markComplete();
    expect((await openLoadDatabase(name)).found).toBe("setup");
  });

  test("after a scenario sent media, the next run keeps the catalog and seeds the users again", async () => {
    await (await openLoadDatabase(name)).markTouched();
    const touched = await openLoadDatabase(name);
    expect(touched.found).toBe("catalog");
    await touched.markComplete();
    expect((await openLoadDatabase(name)).found).toBe("setup");
  });

  test("a database marked by other migrations, or by nothing we know, is dropped and created again", async () => {
    await onAdmin((admin) =>
      admin.unsafe(
        `comment on database "${name}" is 'rollcall-load: setup complete, migrations 0000000000000000'`,
      ),
    );
    expect((await openLoadDatabase(name)).found).toBe("nothing");
  });

  test("a throwaway database ignores the marks and is dropped on release", async () => {
    const throwaway = await openLoadDatabase(null);
    await throwaway.markTouched();
    await throwaway.release();
    const [left] = await onAdmin(
      (admin) =>
        admin<{ n: number }[]>`select count(*)::int as n from pg_database where datname = ${throwaway.name}`,
    );
    expect(left?.n).toBe(0);
  });
});
