import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPartner, issueKey, revokeKey } from "../src/store/keys.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

test("a revoked key is refused within 5 seconds, even right after it was used (docs/api.md §10)", async () => {
  await createPartner(server.store, { id: "revoking", name: "revoking" });
  const { row, key } = await issueKey(server.store, {
    partnerId: "revoking",
    environment: "sandbox",
    label: null,
  });
  expect((await server.call("GET", "/v1/health", { key })).status).toBe(200);
  expect(await revokeKey(server.store, row.id)).toBe(true);
  const revokedAt = Date.now();
  let status = 200;
  while (status === 200 && Date.now() - revokedAt < 6_000) {
    await Bun.sleep(250);
    status = (await server.call("GET", "/v1/health", { key })).status;
  }
  expect(status).toBe(401);
  expect(Date.now() - revokedAt).toBeLessThan(5_000);
});
