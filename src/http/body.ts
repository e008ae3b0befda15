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
 * How much of a body the service reads and drops so that an answer given before it ends reaches the
 * client. A client that writes its whole body before it reads (Python's urllib, a streamed fetch) sees
 * such an answer only if the connection is still open when it has written the last byte; the runtime
 * closes it as soon as the answer is written when the answer or the client (Connection: close) says so,
 * and the client's next write fails instead. So a chunked body over the cap is read on to its end, and
 * a client that asked to close has what it sent to a request answered without reading it read first
 * (`dropUnreadBody`); past this many bytes, or after BODY_TIMEOUT_MS, the answer goes out and the
 * connection is closed.
 */
export const DROPPED_BODY_BYTES = 8 * MAX_BODY_BYTES;

/** Closes the connection with the answer: the rest of the body may still arrive. */
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

/** A promise of `LATE` once `ms` have passed, and a way to stop its timer. */
const LATE = Symbol("late");
function lateAfter(ms: number): { late: Promise<typeof LATE>; clear: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), Math.max(0, ms));
  });
  return { late, clear: () => clearTimeout(timer) };
}

/**
 * Reads a body piece by piece, keeping at most the cap: past it, pieces are dropped until the body ends
 * (`overflow`, keeping the connection) or passes DROPPED_BODY_BYTES (`overflow` that closes it). What
 * `overflow` says is the error a body over the cap deserves; a body that stops arriving is a 408, or,
 * once past the cap, that error with the connection closed.
 */
async function readCapped(
  reader: Pick<ReadableStreamDefaultReader<Uint8Array>, "read">,
  overflow: (headers?: Record<string, string>) => ApiError,
  late: Promise<typeof LATE>,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let pieces = 0; ; pieces++) {
    if (pieces >= PIECES_BEFORE_YIELDING) await nextTurn();
    const piece = await Promise.race([reader.read(), late]);
    if (piece === LATE) throw size > MAX_BODY_BYTES ? overflow(CLOSE) : tooSlow();
    if (piece.done) {
      if (size > MAX_BODY_BYTES) throw overflow();
      return Buffer.concat(chunks);
    }
    size += piece.value.byteLength;
    if (size > DROPPED_BODY_BYTES) throw overflow(CLOSE);
    if (size <= MAX_BODY_BYTES) chunks.push(piece.value);
  }
}

/**
 * The body's bytes. With a declared length the server reads exactly that many bytes, already judged
 * against the cap: one native read. Without one (chunked), the stream is read piece by piece and judged
 * as it arrives (`readCapped`). A body that has not arrived within BODY_TIMEOUT_MS is a 408; a read
 * that fails is a client that went away: a bad request, not a failure of the service's, whether or not
 * anyone is still there to read the answer.
 */
async function receive(request: Request, declared: number, json: boolean): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const { late, clear } = lateAfter(BODY_TIMEOUT_MS);
  const reader = declared > 0 ? null : request.body.getReader();
  try {
    if (reader !== null) return await readCapped(reader, json ? tooLarge : unsupported, late);
    const read = await Promise.race([request.arrayBuffer(), late]);
    if (read === LATE) throw tooSlow();
    return new Uint8Array(read);
  } catch (error) {
    reader?.cancel().catch(() => {});
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_request", "The request body ended before it was complete.");
  } finally {
    clear();
  }
}

/**
 * Reads and drops the body of a request answered without reading it, when its client asked to close
 * the connection after the answer: up to DROPPED_BODY_BYTES, until `untilMs` (performance.now()), so
 * that a client writing it all before it reads gets the answer (see DROPPED_BODY_BYTES). A client that
 * keeps the connection needs nothing: the runtime drops what it sends while the answer goes out.
 */
export async function dropUnreadBody(request: Request, untilMs: number): Promise<void> {
  const closing = /\bclose\b/i.test(request.headers.get("connection") ?? "");
  if (!closing || request.body === null || request.bodyUsed) return;
  const reader = request.body.getReader();
  const { late, clear } = lateAfter(untilMs - performance.now());
  try {
    for (let size = 0; size <= DROPPED_BODY_BYTES; ) {
      const piece = await Promise.race([reader.read(), late]);
      if (piece === LATE || piece.done) return;
      size += piece.value.byteLength;
    }
  } catch {
    // The client went away: nobody is left to answer.
  } finally {
    clear();
    reader.cancel().catch(() => {});
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
