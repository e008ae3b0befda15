/** What a key lookup costs the database (docs/api.md §2 step 3, §10): bogus keys must not cost a query each. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createAuthenticator } from "../src/http/auth.ts";
import { ApiError } from "../src/http/errors.ts";
import type { Store } from "../src/store/db.ts";
import { createPartner, issueKey, revokeKey } from "../src/store/keys.ts";
import { RequestScope, withinScope } from "../src/store/requestScope.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

let database: TestDatabase;
let goodKey: string;

beforeAll(async () => {
  database = await createTestDatabase(2);
  await createPartner(database.store, { id: "acme", name: "acme" });
  goodKey = (await issueKey(database.store, { partnerId: "acme", environment: "sandbox", label: null })).key;
});

afterAll(async () => {
  await database.drop();
});

/** Every way the store can reach the database, counted. */
const QUERY_METHODS = new Set<PropertyKey>([
  "select",
  "selectDistinct",
  "execute",
  "insert",
  "update",
  "delete",
]);

function countingStore(store: Store): { store: Store; queries: () => number } {
  let queries = 0;
  const db = new Proxy(store.db, {
    get(target, property, receiver) {
      if (QUERY_METHODS.has(property) || property === "transaction") queries++;
      return Reflect.get(target, property, receiver);
    },
  });
  const counted: Store = {
    ...store,
    db,
    rows: (statement) => {
      queries++;
      return store.rows(statement);
    },
    read: (statement) => {
      queries++;
      return store.read(statement);
    },
  };
  return { store: counted, queries: () => queries };
}

const bogusKey = () => `acme-${randomBytes(32).toString("base64url")}`;

async function refusal(attempt: Promise<unknown>): Promise<string> {
  try {
    await attempt;
    return "accepted";
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
}

describe("key lookups", () => {
  test("500 distinct bogus keys cost a few queries in all, and a good key keeps working meanwhile", async () => {
    const { store, queries } = countingStore(database.store);
    const authenticate = createAuthenticator(store, "sandbox");
    expect((await authenticate(goodKey)).partnerId).toBe("acme");
    const before = queries();
    const started = performance.now();
    const answers: string[] = [];
    for (let wave = 0; wave < 10; wave++) {
      const bogus = Array.from({ length: 50 }, () => refusal(authenticate(bogusKey())));
      const good = authenticate(goodKey);
      answers.push(...(await Promise.all(bogus)));
      expect((await good).partnerId).toBe("acme");
    }
    const elapsed = performance.now() - started;
    expect(new Set(answers)).toEqual(new Set(["invalid_api_key"]));
    expect(answers).toHaveLength(500);
    // At most one load per 250 ms, plus the one a background refresh may add.
    const spent = queries() - before;
    expect(spent).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 2);
    expect(spent).toBeLessThanOrEqual(15);
  });

  test("one client sending bogus keys one after another is held to one load per 250 ms", async () => {
    const { store, queries } = countingStore(database.store);
    const authenticate = createAuthenticator(store, "sandbox");
    const started = performance.now();
    for (let i = 0; i < 8; i++) expect(await refusal(authenticate(bogusKey()))).toBe("invalid_api_key");
    const elapsed = performance.now() - started;
    expect(queries()).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
  });

  test("a known key costs no query while the key set is fresh", async () => {
    const { store, queries } = countingStore(database.store);
    const authenticate = createAuthenticator(store, "sandbox");
    await authenticate(goodKey);
    const before = queries();
    for (let i = 0; i < 200; i++) await authenticate(goodKey);
    expect(queries() - before).toBeLessThanOrEqual(1);
  });

  test("a key issued a moment ago works on its first request, even right after a load", async () => {
    const authenticate = createAuthenticator(database.store, "sandbox");
    await authenticate(goodKey);
    const { key } = await issueKey(database.store, {
      partnerId: "acme",
      environment: "sandbox",
      label: "new",
    });
    const started = performance.now();
    expect((await authenticate(key)).partnerId).toBe("acme");
    expect(performance.now() - started).toBeLessThan(600);
  });

  test("a revoked key is refused within 2 seconds although it was just used; the other environment's never", async () => {
    const authenticate = createAuthenticator(database.store, "sandbox");
    const { row, key } = await issueKey(database.store, {
      partnerId: "acme",
      environment: "sandbox",
      label: null,
    });
    const production = await issueKey(database.store, {
      partnerId: "acme",
      environment: "production",
      label: null,
    });
    expect(await refusal(authenticate(production.key))).toBe("invalid_api_key");
    expect((await authenticate(key)).keyId).toBe(row.id);
    await revokeKey(database.store, row.id);
    const revokedAt = performance.now();
    let answer = "accepted";
    while (answer === "accepted" && performance.now() - revokedAt < 4_000) {
      await Bun.sleep(100);
      answer = await refusal(authenticate(key));
    }
    expect(answer).toBe("invalid_api_key");
    expect(performance.now() - revokedAt).toBeLessThan(2_500);
  });

  test("a load started by a request that ends early still answers the others waiting on it", async () => {
    const authenticate = createAuthenticator(database.store, "sandbox");
    const scope = new RequestScope(60_000);
    const leaving = withinScope(scope, () => refusal(authenticate(goodKey)));
    const staying = authenticate(goodKey);
    scope.abort("client_gone");
    expect((await staying).partnerId).toBe("acme");
    expect(await leaving).toBe("accepted");
  });

  test("a failed load fails the requests that waited for it, and the next one loads again", async () => {
    let failing = true;
    const store: Store = {
      ...database.store,
      db: new Proxy(database.store.db, {
        get(target, property, receiver) {
          if (failing && property === "select") throw new Error("database away");
          return Reflect.get(target, property, receiver);
        },
      }),
    };
    const authenticate = createAuthenticator(store, "sandbox");
    expect(await refusal(authenticate(goodKey))).toBe("Error: database away");
    failing = false;
    expect((await authenticate(goodKey)).partnerId).toBe("acme");
  });
});
