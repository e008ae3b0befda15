/** History cursors: signed, bound to their user, good for 24 hours (docs/api.md §7). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CURSOR_TTL_MS, decodeCursor, encodeCursor } from "../src/http/cursor.ts";
import { createUser } from "./support/catalogFixtures.ts";
import { expectedOrder, startPagingServer } from "./support/pagingHistory.ts";
import type { TestServer } from "./support/server.ts";

let server: TestServer;
let key: string;
let pagingUser: string;

beforeAll(async () => {
  ({ server, key, pagingUser } = await startPagingServer());
});

afterAll(async () => {
  await server.close();
});

const history = (userId: string, query = "") =>
  server.call("GET", `/v1/users/${userId}/events${query}`, { key });

describe("cursors", () => {
  const position = { startsAtMs: Date.UTC(2024, 5, 1), eventId: 42 };
  const secret = "unit-test-secret-of-at-least-32-characters";
  const userId = "0b6e4d9c-6f7e-4a56-9a38-3e2f2c1d0a11";

  test("a cursor is good for 24 hours and not a millisecond more", () => {
    const issuedAt = Date.UTC(2025, 0, 1);
    const cursor = encodeCursor(secret, userId, position, () => issuedAt);
    expect(decodeCursor(secret, userId, cursor, () => issuedAt + CURSOR_TTL_MS)).toEqual(position);
    expect(() => decodeCursor(secret, userId, cursor, () => issuedAt + CURSOR_TTL_MS + 1)).toThrow();
  });

  const invalidCursor = async (cursor: string, forUser = pagingUser) => {
    const response = await history(forUser, `?cursor=${encodeURIComponent(cursor)}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_cursor");
  };

  test("a tampered cursor is 400 invalid_cursor, wherever the change is", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const [payload = "", signature = ""] = cursor.split(".");
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    await invalidCursor(`${flip(payload, 2)}.${signature}`);
    await invalidCursor(`${payload}.${flip(signature, signature.length - 1)}`);
    await invalidCursor(`${payload}.${signature}x`);
    await invalidCursor(`${payload}.${signature}.${signature}`);
    await invalidCursor("not-a-cursor");
    await invalidCursor(payload);
  });

  test("the cursor is judged before the user (docs/api.md §2: the user is the last check)", async () => {
    await invalidCursor("not-a-cursor", crypto.randomUUID());
  });

  test("a cursor follows the user whatever the case of the user_id in the path", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const response = await history(pagingUser.toUpperCase(), `?limit=3&cursor=${encodeURIComponent(cursor)}`);
    expect(response.status).toBe(200);
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual(expectedOrder.slice(3, 6));
  });

  test("another user's cursor is 400 invalid_cursor", async () => {
    const cursor: string = (await history(pagingUser, "?limit=3")).body.next_cursor;
    const otherUser = await createUser(server, key, "thief@example.com");
    await invalidCursor(cursor, otherUser);
  });

  test("an expired cursor is 400 invalid_cursor", async () => {
    const issuedAt = Date.now() - CURSOR_TTL_MS - 1000;
    const expired = encodeCursor(server.cursorSecret, pagingUser, position, () => issuedAt);
    await invalidCursor(expired);
    const fresh = encodeCursor(server.cursorSecret, pagingUser, position);
    expect((await history(pagingUser, `?cursor=${encodeURIComponent(fresh)}`)).status).toBe(200);
  });

  test("an empty cursor reads as none: the first page", async () => {
    const response = await history(pagingUser, "?cursor=&limit=1");
    expect(response.body.events.map((e: { id: number }) => e.id)).toEqual(expectedOrder.slice(0, 1));
    expect(response.body.total).toBe(61);
  });
});
