import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { createAuthenticator } from "../src/http/auth.ts";
import {
  createPartner,
  getPartner,
  hashKey,
  issueKey,
  type KeyEnvironment,
  listKeys,
  listPartners,
  loadActiveKeys,
  matchActiveKey,
  PartnerExistsError,
  parsePresentedKey,
  recordKeyUse,
  revokeKey,
  UnknownPartnerError,
} from "../src/store/keys.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

const SECRET = `${"A".repeat(42)}_`;

let database: TestDatabase;

/** The active key a presented key is, as the service finds it: among every active key of its environment. */
const activeKeyOf = async (key: string, environment: KeyEnvironment) =>
  matchActiveKey(await loadActiveKeys(database.store, environment), key);

describe("parsePresentedKey", () => {
  test("splits a well-formed key at its first hyphen; secrets may contain hyphens", () => {
    expect(parsePresentedKey(`acme_1-${SECRET}`)).toEqual({ partnerId: "acme_1", secret: SECRET });
    const dashed = `${"-".repeat(10)}${"x".repeat(33)}`;
    expect(parsePresentedKey(`acme-${dashed}`)).toEqual({ partnerId: "acme", secret: dashed });
  });

  test.each([
    "",
    `-${SECRET}`,
    `Acme-${SECRET}`,
    `acme.co-${SECRET}`,
    `${"a".repeat(65)}-${SECRET}`,
    `acme-${SECRET.slice(1)}`,
    `acme-${SECRET}A`,
    `acme-${SECRET.slice(1)}=`,
    `acme ${SECRET}`,
    `acme-${SECRET}\n`,
  ])("rejects %p", (key) => {
    expect(parsePresentedKey(key)).toBeNull();
  });

  test("hashKey is the SHA-256 hex of the whole key", () => {
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("partners and keys on PostgreSQL", () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  test("partners are created once and listed by id", async () => {
    const created = await createPartner(database.store, { id: "zeta", name: "Zeta" });
    expect(created).toMatchObject({
      id: "zeta",
      name: "Zeta",
      ingestLimit: null,
      readLimit: null,
      writeLimit: null,
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    await createPartner(database.store, { id: "alpha", name: "Alpha" });
    await expect(createPartner(database.store, { id: "zeta", name: "again" })).rejects.toBeInstanceOf(
      PartnerExistsError,
    );
    expect((await listPartners(database.store)).map((p) => p.id)).toEqual(["alpha", "zeta"]);
    expect(await getPartner(database.store, "zeta")).toEqual(created);
    expect(await getPartner(database.store, "nobody")).toBeNull();
  });

  test("an issued key is found until it is revoked", async () => {
    const { row, key } = await issueKey(database.store, {
      partnerId: "zeta",
      environment: "sandbox",
      label: "ci",
    });
    expect(key).toMatch(/^zeta-[A-Za-z0-9_-]{43}$/);
    expect(parsePresentedKey(key)).toEqual({ partnerId: "zeta", secret: key.slice(5) });
    expect(row).toMatchObject({ partnerId: "zeta", environment: "sandbox", label: "ci", revokedAt: null });
    expect(await activeKeyOf(key, "sandbox")).toEqual({
      id: row.id,
      partnerId: "zeta",
      environment: "sandbox",
      keyHash: expect.any(String),
    });
    expect(await revokeKey(database.store, row.id)).toBe(true);
    expect(await activeKeyOf(key, "sandbox")).toBeNull();
    const [listed] = await listKeys(database.store, "zeta");
    const firstRevocation = listed?.revokedAt;
    expect(firstRevocation).toBeInstanceOf(Date);
    // Revoking again is harmless and keeps the first revocation time.
    expect(await revokeKey(database.store, row.id)).toBe(true);
    expect((await listKeys(database.store, "zeta"))[0]?.revokedAt).toEqual(firstRevocation ?? null);
  });

  test("unknown, altered and malformed keys are not found", async () => {
    const { key } = await issueKey(database.store, {
      partnerId: "alpha",
      environment: "production",
      label: null,
    });
    expect(await activeKeyOf(key, "production")).not.toBeNull();
    const last = key.at(-1) === "A" ? "B" : "A";
    expect(await activeKeyOf(`${key.slice(0, -1)}${last}`, "production")).toBeNull();
    expect(await activeKeyOf(`zeta-${key.slice(6)}`, "production")).toBeNull();
    expect(await activeKeyOf("not a key", "production")).toBeNull();
    expect(await revokeKey(database.store, "00000000-0000-0000-0000-000000000000")).toBe(false);
    expect(await revokeKey(database.store, "not-a-uuid")).toBe(false);
  });

  test("keys for an unknown partner are refused", async () => {
    await expect(
      issueKey(database.store, { partnerId: "nobody", environment: "sandbox", label: null }),
    ).rejects.toBeInstanceOf(UnknownPartnerError);
  });

  test("key listings never carry the secret or its hash", async () => {
    const { key } = await issueKey(database.store, {
      partnerId: "alpha",
      environment: "sandbox",
      label: "listing",
    });
    const listed = await listKeys(database.store, "alpha");
    expect(listed.map((k) => k.environment)).toEqual(["production", "sandbox"]);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(key.slice(6));
    expect(text).not.toContain(hashKey(key));
    for (const row of listed) {
      expect(Object.keys(row).sort()).toEqual([
        "createdAt",
        "environment",
        "id",
        "label",
        "lastUsedAt",
        "partnerId",
        "revokedAt",
      ]);
    }
  });

  test("a key's use is recorded on that key alone, and once a minute however many requests use it", async () => {
    await createPartner(database.store, { id: "used", name: "used" });
    const issue = () => issueKey(database.store, { partnerId: "used", environment: "sandbox", label: null });
    const [first, second] = [await issue(), await issue()];
    let updates = 0;
    const db = new Proxy(database.store.db, {
      get(target, property, receiver) {
        if (property === "update") updates++;
        return Reflect.get(target, property, receiver);
      },
    });
    const authenticate = createAuthenticator({ ...database.store, db }, "sandbox");
    for (let i = 0; i < 30; i++) expect((await authenticate(first.key)).keyId).toBe(first.row.id);
    const deadline = performance.now() + 5000;
    while (performance.now() < deadline && (await listKeys(database.store, "used"))[0]?.lastUsedAt === null) {
      await Bun.sleep(20);
    }
    const [used, unused] = await listKeys(database.store, "used");
    expect(used?.id).toBe(first.row.id);
    expect(used?.lastUsedAt).toBeInstanceOf(Date);
    expect(unused).toMatchObject({ id: second.row.id, lastUsedAt: null });
    expect(updates).toBe(1);
    await recordKeyUse(database.store, second.row.id);
    expect((await listKeys(database.store, "used"))[1]?.lastUsedAt).toBeInstanceOf(Date);
  });

  test("a key-use write that cannot get through is called off within seconds, the request unharmed", async () => {
    await createPartner(database.store, { id: "blocked", name: "blocked" });
    const { key } = await issueKey(database.store, {
      partnerId: "blocked",
      environment: "sandbox",
      label: null,
    });
    // EXCLUSIVE lets the key set be read and stops every write of api_keys until it is let go.
    const locker = postgres(database.url, { max: 1, onnotice: () => {} });
    let unlock = () => {};
    const released = new Promise<void>((resolve) => {
      unlock = resolve;
    });
    let locked = () => {};
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const transaction = locker.begin(async (tx) => {
      await tx`lock table api_keys in exclusive mode`;
      locked();
      await released;
    });
    await holding;
    const waitingWrites = async () =>
      (
        await database.store.rows<{ count: number }>(
          sql`select count(*)::int as count from pg_stat_activity where datname = current_database()
            and application_name = 'rollcall' and query like 'update "api_keys"%' and state = 'active'`,
        )
      )[0]?.count;
    try {
      const authenticate = createAuthenticator(database.store, "sandbox");
      expect((await authenticate(key)).partnerId).toBe("blocked");
      await Bun.sleep(500);
      expect(await waitingWrites()).toBe(1);
      await Bun.sleep(5_500);
      expect(await waitingWrites()).toBe(0);
    } finally {
      unlock();
      await transaction;
      await locker.end();
    }
    expect((await listKeys(database.store, "blocked"))[0]?.lastUsedAt).toBeNull();
  }, 20_000);
});
