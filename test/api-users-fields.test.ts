import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./support/server.ts";
import { storedUser } from "./support/storedUsers.ts";

/** POST /v1/users: what each member of the body may hold (docs/api.md §3), and the errors that say why not. */

let server: TestServer;
let sandboxKey: string;

beforeAll(async () => {
  server = await startTestServer();
  sandboxKey = (await server.partner("acme")).sandbox;
});

afterAll(async () => {
  await server.close();
});

const create = (body: unknown) => server.call("POST", "/v1/users", { key: sandboxKey, body });
const stored = (userId: string) => storedUser(server.store, userId);

describe("POST /v1/users fields", () => {
  test("length limits count characters: 200 emoji make a valid name, 201 do not", async () => {
    const emoji = "\u{1F600}";
    const ok = await create({ email: "emoji@example.com", first_name: emoji.repeat(200) });
    expect(ok.status).toBe(201);
    expect((await stored(ok.body.user_id))?.first_name).toBe(emoji.repeat(200));
    const tooLong = await create({ email: "emoji2@example.com", address: { city: emoji.repeat(201) } });
    expect([tooLong.status, tooLong.body.error.code]).toEqual([400, "invalid_request"]);
  });

  test("unknown members, at the top or in the address, are ignored and never stored", async () => {
    const response = await create({
      email: "unknowns@example.com",
      nickname: "ex",
      address: { city: "Paris", planet: "Earth" },
    });
    expect(response.status).toBe(201);
    expect((await stored(response.body.user_id))?.address).toEqual({ city: "Paris" });
  });

  test("null optional fields count as absent", async () => {
    const response = await create({
      email: "nulls@example.com",
      partner_user_id: null,
      first_name: null,
      last_name: null,
      phone_number: null,
      address: null,
    });
    expect(response.status).toBe(201);
    const row = await stored(response.body.user_id);
    expect(row?.address).toBeNull();
    expect(row?.first_name).toBeNull();
  });

  test("absent, null, non-string or unparseable email is invalid_email", async () => {
    const bodies: unknown[] = [
      {},
      { email: null },
      { email: 42 },
      { email: ["a@b.co"] },
      { email: "" },
      { email: "   " },
      { email: "plain" },
      { email: "no-at.example.com" },
      { email: "a@b" },
      { email: "a@@b.co" },
      { email: "a b@c.co" },
      { email: "a@b..co" },
      { email: "@b.co" },
      { email: "a@.co" },
      { email: "a@b.c<script>" },
      { email: "a,b@c.com" },
      { email: "(a)@b.co" },
      { email: "a@-.-" },
      { email: "a@b!.com" },
      { email: "a@x.\u00a0" },
      { email: "a@b.\ufeff" },
      { email: "a@b.\u3000" },
      { email: "a@b.\u200b" },
      { email: "a@\u2605.\u2606" },
      { email: "a@\u00a9.\u00ae" },
      { email: "a@b.\u2026" },
      { email: "a@b.\u0301" },
      { email: "a@\u0301b.com" },
      { email: "a@b.c\ufe0f" },
      { email: "a@b.\u115f" },
      { email: `${"x".repeat(243)}@example.com` },
      { email: 5, first_name: 7 },
    ];
    for (const body of bodies) {
      const response = await create(body);
      expect([body, response.status, response.body.error?.code]).toEqual([body, 400, "invalid_email"]);
    }
    const emptyBody = await server.call("POST", "/v1/users", { key: sandboxKey, rawBody: "" });
    expect(emptyBody.body.error.code).toBe("invalid_email");
  });

  test("ordinary addresses pass: plus tags, apostrophes, internationalised domains, any case", async () => {
    for (const email of [
      "first.last+tag@mail.example",
      "o'brien@x.example",
      "ana@bücher.example",
      "ravi@\u0939\u093f\u0928\u094d\u0926\u0940.example",
      "  nbsp@trimmed.example\u00a0",
      "Up@Case.Example",
    ]) {
      expect([email, (await create({ email })).status]).toEqual([email, 201]);
    }
  });

  test("an email of exactly 254 characters after trimming is accepted", async () => {
    const email = `${"y".repeat(242)}@example.com`;
    expect(email).toHaveLength(254);
    expect((await create({ email: `  ${email}  ` })).status).toBe(201);
  });

  test("the email's 254 characters are code points: an emoji counts once", async () => {
    const email = `\u{1F600}${"a".repeat(63)}@${"b".repeat(185)}.com`;
    expect([...email]).toHaveLength(254);
    expect((await create({ email })).status).toBe(201);
    const tooLong = await create({ email: `a${email}` });
    expect([tooLong.status, tooLong.body.error?.code]).toEqual([400, "invalid_email"]);
  });

  test("wrong types and over-long optional fields are invalid_request", async () => {
    const ok = { email: "fields@example.com" };
    const bodies: unknown[] = [
      { ...ok, first_name: 1 },
      { ...ok, last_name: true },
      { ...ok, partner_user_id: 12 },
      { ...ok, address: "1 Main St" },
      { ...ok, address: ["1 Main St"] },
      { ...ok, address: { city: 3 } },
      { ...ok, first_name: "n".repeat(201) },
      { ...ok, last_name: "n".repeat(201) },
      { ...ok, partner_user_id: "p".repeat(256) },
      { ...ok, address: { postal_code: "9".repeat(201) } },
      [ok],
      "fields@example.com",
      null,
    ];
    for (const body of bodies) {
      const response = await create(body);
      expect([body, response.status, response.body.error?.code]).toEqual([body, 400, "invalid_request"]);
    }
  });

  test("a phone that is not a string, too long or malformed is not stored and the call succeeds", async () => {
    const phones: unknown[] = [
      5551234,
      true,
      ["+1 555 0100"],
      { number: "+1 555 0100" },
      "5".repeat(33),
      "\u{1F4DE}".repeat(33),
      "+1 555\u0000 0100",
      "+1 555 \ud800",
      ["\u0000"],
    ];
    for (const [i, phone_number] of phones.entries()) {
      const response = await create({
        email: `phone-dropped${i}@example.com`,
        phone_number,
        first_name: "Ada",
      });
      expect([phone_number, response.status]).toEqual([phone_number, 201]);
      const row = await stored(response.body.user_id);
      expect([phone_number, row?.phone_number, row?.first_name]).toEqual([phone_number, null, "Ada"]);
    }
  });

  test("a phone's 32 characters are code points counted once trimmed", async () => {
    const emoji = "\u{1F4DE}".repeat(32);
    const padded = `  ${"5".repeat(32)}\u00a0`;
    for (const [i, phone_number] of [emoji, padded].entries()) {
      const response = await create({ email: `phone-kept${i}@example.com`, phone_number });
      expect(response.status).toBe(201);
      expect((await stored(response.body.user_id))?.phone_number).toBe(phone_number.trim());
    }
  });

  test("a malformed phone does not hide other malformed members", async () => {
    const response = await create({
      email: "malformed@example.com",
      phone_number: "\u0000",
      first_name: "A\u0000",
    });
    expect([response.status, response.body.error?.code]).toEqual([400, "invalid_request"]);
    expect(response.body.error.details.fields).toEqual([{ field: "first_name", reason: "type" }]);
  });

  test("invalid_request names every failing field and why, a nested one by its path, never the phone", async () => {
    const response = await create({
      email: "details@example.com",
      first_name: "\u{1F600}".repeat(201),
      phone_number: 5551234,
      address: { line1: "1 Main St", city: "c".repeat(201) },
    });
    expect([response.status, response.body.error?.code]).toEqual([400, "invalid_request"]);
    expect(response.body.error.details.fields).toEqual([
      { field: "first_name", reason: "max_length" },
      { field: "address.city", reason: "max_length" },
    ]);
  });

  test("fields at their maximum lengths are accepted", async () => {
    const response = await create({
      email: "maxed@example.com",
      first_name: "n".repeat(200),
      last_name: "n".repeat(200),
      partner_user_id: "p".repeat(255),
      phone_number: "5".repeat(32),
      address: { line1: "l".repeat(200), line2: "l".repeat(200), region: "r".repeat(200) },
    });
    expect(response.status).toBe(201);
  });
});
