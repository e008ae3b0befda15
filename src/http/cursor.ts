import { createHmac, timingSafeEqual } from "node:crypto";
import type { HistoryPosition } from "../store/history.ts";
import { ApiError } from "./errors.ts";

/** docs/api.md §7: a cursor is good for 24 hours after the page that issued it. */
export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;

/** Milliseconds since the epoch; injected so expiry can be tested without waiting a day. */
export type Clock = () => number;

const systemClock: Clock = () => Date.now();

/**
 * The user id is part of what is signed but not of what is sent: a cursor replayed for another user
 * fails its signature exactly like a tampered one, and the token reveals nothing about whose it is.
 */
function signatureOf(secret: string, userId: string, payload: string): string {
  return createHmac("sha256", secret).update(`history-cursor\n${userId}\n${payload}`).digest("base64url");
}

/**
 * `<payload>.<signature>`, both base64url. The payload is `[startsAtMs, eventId, expiresAtMs]`: the
 * keyset position of the last event of the page and the end of the cursor's life.
 */
export function encodeCursor(
  secret: string,
  userId: string,
  position: HistoryPosition,
  clock: Clock = systemClock,
): string {
  const payload = Buffer.from(
    JSON.stringify([position.startsAtMs, position.eventId, clock() + CURSOR_TTL_MS]),
  ).toString("base64url");
  return `${payload}.${signatureOf(secret, userId, payload)}`;
}

const invalidCursor = () =>
  new ApiError(
    "invalid_cursor",
    "The cursor is not valid for this user or has expired; restart from the first page.",
  );

function isPosition(value: unknown): value is [number, number, number] {
  return (
    Array.isArray(value) &&
    value.length === 3 &&
    value.every((n) => Number.isSafeInteger(n)) &&
    (value[1] as number) > 0
  );
}

function parsePayload(payload: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}

/**
 * The position a cursor stands for, or 400 invalid_cursor when it was not issued by this service for
 * this user (any change to it breaks the signature) or its 24 hours are over.
 */
export function decodeCursor(
  secret: string,
  userId: string,
  token: string,
  clock: Clock = systemClock,
): HistoryPosition {
  const [payload, signature, extra] = token.split(".");
  if (payload === undefined || signature === undefined || extra !== undefined) throw invalidCursor();
  // Compared as text, not as decoded bytes: base64url decoding ignores stray characters and the spare
  // bits of the last one, so two different strings can decode alike and a tampered cursor would pass.
  const expected = Buffer.from(signatureOf(secret, userId, payload));
  const presented = Buffer.from(signature);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw invalidCursor();
  const value = parsePayload(payload);
  if (!isPosition(value)) throw invalidCursor();
  const [startsAtMs, eventId, expiresAtMs] = value;
  if (clock() > expiresAtMs) throw invalidCursor();
  return { startsAtMs, eventId };
}
