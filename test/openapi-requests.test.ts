import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * What the service accepts, the OpenAPI document accepts too: partners put validating proxies in front
 * of the service that refuse, before it sees them, requests the document forbids, so a schema narrower
 * than the service breaks calls docs/api.md promises to take.
 */

let server: TestServer;
let sandboxKey: string;
/** The document's schema of the POST /v1/users body. */
let newUser: { properties: { phone_number?: Record<string, unknown> } };

beforeAll(async () => {
  server = await startTestServer();
  sandboxKey = (await server.partner("acme")).sandbox;
  const document = await server.call("GET", "/v1/openapi.json", { key: sandboxKey });
  expect(document.status).toBe(200);
  newUser = document.body.components.schemas.NewUser;
});

afterAll(async () => {
  await server.close();
});

test("phone_number takes any value in the document, as POST /v1/users does (docs/api.md §3)", async () => {
  // No type, enum or subschema: every JSON value passes a schema made of a description alone.
  expect(Object.keys(newUser.properties.phone_number ?? {})).toEqual(["description"]);
  const phones: unknown[] = [null, "+15551234567", "5".repeat(40), 15551234567, true, {}, ["+1"]];
  for (const [index, phone_number] of phones.entries()) {
    const response = await server.call("POST", "/v1/users", {
      key: sandboxKey,
      body: { email: `phone${index}@example.com`, phone_number },
    });
    expect([JSON.stringify(phone_number), response.status]).toEqual([JSON.stringify(phone_number), 201]);
  }
});
