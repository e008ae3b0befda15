import { mayHoldUnstorableString, nestsDeeperThan } from "../store/text.ts";
import { ApiError } from "./errors.ts";

/** docs/api.md §1: request bodies over 2 MiB are refused with 413 payload_too_large. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

const tooLarge = (headers: Record<string, string> = {}) =>
  new ApiError(
    "payload_too_large",
    `The request body exceeds ${MAX_BODY_BYTES} bytes; split it and resend.`,
    null,
    headers,
  );

/**
 * `application/json`, any case, optionally with parameters such as `charset=utf-8`. A charset other
 * than UTF-8 names bytes this service would misread (JSON in and out is UTF-8, docs/api.md §1), and so
 * does a Content-Encoding (gzip, say): both are refused rather than decoded as something else.
 */
function isUtf8Json(contentType: string | null, contentEncoding: string | null): boolean {
  if (contentType === null || !/^\s*application\/json\s*(;|$)/i.test(contentType)) return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return false;
  return contentEncoding === null || /^\s*(identity)?\s*$/i.test(contentEncoding);
}

const unsupported = (headers: Record<string, string> = {}) =>
  new ApiError(
    "unsupported_media_type",
    "Send the body as UTF-8 JSON with Content-Type: application/json, without a Content-Encoding.",
    null,
    headers,
  );

/**
 * How long a client may take to send its whole body. A partner backend sends 2 MiB in well under a
 * second; a client that stops sending is answered 408 before the request deadline (8 s) would blame
 * the service with a 500, and its connection is closed, since the rest of its body may still arrive.
 */
export const BODY_TIMEOUT_MS = 5000;

/**
 * An answer given while a body is still arriving closes the connection: otherwise the runtime keeps
 * reading and dropping the rest of it, for as long as the client sends it.
 */
const CLOSE = { connection: "close" };

const tooSlow = () =>
  new ApiError(
    "request_timeout",
    `The request body did not arrive within ${BODY_TIMEOUT_MS / 1000} s; send it again in one go.`,
    null,
    CLOSE,
  );

/**
 * After this many pieces the reader lets the event loop turn before each read: a waiting read gets each
 * HTTP chunk as a piece of its own, while the runtime queues what arrives between reads as one piece, so
 * a body sent in one-byte chunks costs a read per turn of the loop rather than a promise per byte.
 */
const PIECES_BEFORE_YIELDING = 16;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads a chunked body without ever holding more than the cap: it is cut off, and the connection
 * closed, as soon as it crosses the cap. `overflow` says which error a body over the cap deserves.
 */
async function readCapped(
  request: Request,
  overflow: (headers: Record<string, string>) => ApiError,
): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      if (chunks.length >= PIECES_BEFORE_YIELDING) await nextTurn();
      const { done, value } = await reader.read();
      if (done) return Buffer.concat(chunks);
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) throw overflow(CLOSE);
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
}

/**
 * The body's bytes. With a declared length the server reads exactly that many bytes, already judged
 * against the cap: one native read. Without one (chunked), the stream is read piece by piece and cut
 * off at the cap. A body that has not arrived within BODY_TIMEOUT_MS is a 408; a read that fails is a
 * client that went away: a bad request, not a failure of the service's, whether or not anyone is
 * still there to read the answer.
 */
async function receive(request: Request, declared: number, json: boolean): Promise<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(tooSlow()), BODY_TIMEOUT_MS);
  });
  try {
    const read =
      declared > 0
        ? request.arrayBuffer().then((buffer) => new Uint8Array(buffer))
        : readCapped(request, json ? tooLarge : unsupported);
    return await Promise.race([read, stalled]);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_request", "The request body ended before it was complete.");
  } finally {
    clearTimeout(timer);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * How deep a body may nest arrays and objects. The deepest request of the API is three levels (a
 * batch, its array, an item); the rest is room for unknown members (docs/api.md §1 ignores them).
 */
export const MAX_NESTING = 32;

/** A parsed body, and whether its text could hold a malformed string at all (see `readJsonBody`). */
export type JsonBody = { value: unknown; mayHoldMalformed: boolean };

/**
 * docs/api.md §2 steps 6 and 7 in their order: a non-empty body must be JSON by Content-Type (415), fit
 * the cap (413), be valid UTF-8 and parse (400), nesting at most MAX_NESTING levels (400). An empty body
 * counts as `{}`. A declared length is judged before reading, so an oversized upload is refused
 * without being received.
 *
 * A string PostgreSQL would not store as sent (U+0000, an unpaired surrogate) is malformed input
 * (docs/api.md §13); `mayHoldMalformed` says whether the text could hold one at all (see store/text.ts).
 */
export async function readJsonBody(request: Request): Promise<JsonBody> {
  const json = isUtf8Json(request.headers.get("content-type"), request.headers.get("content-encoding"));
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > 0 && !json) throw unsupported();
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await receive(request, declared, json);
  if (bytes.byteLength === 0) return { value: {}, mayHoldMalformed: false };
  if (!json) throw unsupported();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError("invalid_request", "The request body is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_request", "The request body is not valid JSON.");
  }
  if (nestsDeeperThan(value, MAX_NESTING)) {
    throw new ApiError(
      "invalid_request",
      `The request body nests arrays and objects more than ${MAX_NESTING} levels deep.`,
    );
  }
  return { value, mayHoldMalformed: mayHoldUnstorableString(text) };
}
