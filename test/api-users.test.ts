import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseConfig } from "../src/config.ts";
import { createApp } from "../src/http/app.ts";
import { serve } from "../src/http/server.ts";
import { createRateLimits } from "../src/limits/index.ts";
import { ReferenceMatcher } from "../src/shards/reference.ts";
import { type CallResult, startTestServer, type TestServer } from "./support/server.ts";
import { storedUser } from "./support/storedUsers.ts";

let server: TestServer;
let keys: { sandbox: string; production: string };
let otherKey: string;

beforeAll(async () => {
  server = await startTestServer();
  keys = await server.partner("acme");
  otherKey = (await server.partner("globex")).sandbox;
});

afterAll(async () => {
  await server.close();
});

const create = (body: unknown, key = keys.sandbox) => server.call("POST", "/v1/users", { key, body });

const stored = (userId: string) => storedUser(server.store, userId);

describe("POST /v1/users", () => {
  test("creates a user: 201, existing false, a UUID and an ISO timestamp", async () => {
    const response = await create({
      email: "  Ada@Example.com ",
      partner_user_id: "p-1",
      first_name: "Ada",
      last_name: "Lovelace",
      phone_number: "+44 20 7946 0000",
      address: { line1: "1 Main St", city: "London", country: "GB", planet: "Earth" },
      loyalty_tier: "gold",
    });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(["created_at", "existing", "user_id"]);
    expect(response.body.user_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(response.body.existing).toBe(false);
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await stored(response.body.user_id)).toEqual({
      email: "Ada@Example.com",
      email_key: "ada@example.com",
      partner_user_id: "p-1",
      first_name: "Ada",
      last_name: "Lovelace",
      phone_number: "+44 20 7946 0000",
      address: { line1: "1 Main St", city: "London", country: "GB" },
    });
  });

  test("a retry with the email in another case returns the stored profile unchanged: 200, existing true", async () => {
    const first = await create({ email: "grace@example.com", first_name: "Grace" });
    const retry = await create({
      email: " GRACE@example.COM",
      first_name: "Someone Else",
      phone_number: "555",
    });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({
      user_id: first.body.user_id,
      existing: true,
      created_at: first.body.created_at,
    });
    const row = await stored(first.body.user_id);
    expect(row?.first_name).toBe("Grace");
    expect(row?.phone_number).toBeNull();
  });

  test("canonically equivalent addresses (composed or decomposed accents) are one user", async () => {
    const composed = await create({ email: "ana@b\u00fccher.example" });
    const decomposed = await create({ email: "ANA@bu\u0308cher.example" });
    expect([composed.status, decomposed.status]).toEqual([201, 200]);
    expect(decomposed.body.user_id).toBe(composed.body.user_id);
  });

  test("20 concurrent creates of one email: exactly one creates, all get the same user", async () => {
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        create({ email: i % 2 ? "Race@Example.com" : "race@example.com" }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(23).fill(200), 201]);
    expect(responses.filter((r) => r.body.existing === false)).toHaveLength(1);
    expect(new Set(responses.map((r) => r.body.user_id)).size).toBe(1);
    expect(new Set(responses.map((r) => r.body.created_at)).size).toBe(1);
  });

  test("a phone already held by another of the partner's users is not stored and the call succeeds", async () => {
    const holder = await create({ email: "holder@example.com", phone_number: "+1 555 0100" });
    const second = await create({
      email: "second@example.com",
      phone_number: "+1 555 0100",
      first_name: "Sec",
    });
    expect(second.status).toBe(201);
    expect(second.body.user_id).not.toBe(holder.body.user_id);
    const row = await stored(second.body.user_id);
    expect(row?.phone_number).toBeNull();
    expect(row?.first_name).toBe("Sec");
    const otherPartner = await create({ email: "holder@example.com", phone_number: "+1 555 0100" }, otherKey);
    expect(otherPartner.status).toBe(201);
    expect((await stored(otherPartner.body.user_id))?.phone_number).toBe("+1 555 0100");
  });

  test("concurrent creates of different emails with one phone all succeed; one of them keeps the phone", async () => {
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create({ email: `phone${i}@example.com`, phone_number: "+1 555 0199" }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(201));
    const rows = await Promise.all(responses.map((r) => stored(r.body.user_id)));
    expect(rows.filter((row) => row?.phone_number === "+1 555 0199")).toHaveLength(1);
  });

  test("the same email under another partner is a separate user", async () => {
    const mine = await create({ email: "shared@example.com" });
    const theirs = await create({ email: "shared@example.com" }, otherKey);
    expect(theirs.status).toBe(201);
    expect(theirs.body.user_id).not.toBe(mine.body.user_id);
  });

  test("a blank phone is no phone and never blocks another user", async () => {
    const a = await create({ email: "blank1@example.com", phone_number: "  " });
    const b = await create({ email: "blank2@example.com", phone_number: "" });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await stored(a.body.user_id))?.phone_number).toBeNull();
  });

  test("sandbox and production keys of one partner see the same users", async () => {
    // One deployment serves one environment; both deployments share the production dataset.
    const production = await startSiblingDeployment("production");
    try {
      const created = await create({ email: "both@example.com" }, keys.sandbox);
      expect(created.status).toBe(201);
      const again = await production.call("POST", "/v1/users", {
        key: keys.production,
        body: { email: "BOTH@example.com" },
      });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({
        user_id: created.body.user_id,
        existing: true,
        created_at: created.body.created_at,
      });
      const stats = await production.call("GET", `/v1/users/${created.body.user_id}/stats`, {
        key: keys.production,
      });
      expect(stats.status).toBe(200);
      // Each key is bound to its environment: the other deployment refuses it.
      expect((await create({ email: "both@example.com" }, keys.production)).status).toBe(401);
      const wrongEnv = await production.call("POST", "/v1/users", {
        key: keys.sandbox,
        body: { email: "b@x.co" },
      });
      expect(wrongEnv.status).toBe(401);
      expect(wrongEnv.body.error.code).toBe("invalid_api_key");
    } finally {
      await production.stop();
    }
  });
});

/** A second deployment, serving `environment`, on the test server's database. */
async function startSiblingDeployment(environment: "production" | "sandbox") {
  const config = parseConfig({
    SERVICE_ENVIRONMENT: environment,
    DATABASE_URL: server.database.url,
    PORT: "0",
  });
  const limits = createRateLimits(config, { store: server.store });
  const app = createApp({
    config,
    store: server.store,
    matcher: new ReferenceMatcher([], [], config.match),
    limits,
    cursorSecret: "test-cursor-secret-of-at-least-32-chars",
    log: () => {},
  });
  const listening = serve(app, { port: 0, host: "127.0.0.1", log: () => {} });
  const baseUrl = `http://127.0.0.1:${listening.port}`;
  return {
    async call(method: string, path: string, options: { key: string; body?: unknown }): Promise<CallResult> {
      const response = await fetch(baseUrl + path, {
        method,
        headers: { "x-partner-api-key": options.key, "content-type": "application/json" },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    },
    async stop() {
      await listening.stop();
      await limits.close();
    },
  };
}
