import { DrizzleQueryError } from "drizzle-orm";
import { currentScope, RequestAbortedError } from "./requestScope.ts";

/**
 * Failures as the logs and start-up messages show them. The store's failures are wrapped query
 * errors whose own message is the SQL text and its bound parameters, which must not reach a log.
 */

/** How many links of a cause chain the log follows. */
const CAUSES_LOGGED = 5;

/**
 * What the log keeps of an unexpected failure: each error of its cause chain as `Name (code): message`,
 * and the frames where the outermost was thrown. A failed query's own message is its SQL text and
 * bound parameters (users' emails, key hashes), so it is left out; its cause says what went wrong
 * (a refused connection, a timeout, PostgreSQL's error).
 */
export function describeFailure(error: unknown): { error: string; stack?: string } {
  const chain: string[] = [];
  let link: unknown = error;
  for (let depth = 0; link !== undefined && link !== null && depth < CAUSES_LOGGED; depth++) {
    if (link instanceof DrizzleQueryError) {
      chain.push("query failed");
    } else if (link instanceof Error) {
      const code = (link as { code?: unknown }).code;
      chain.push(`${link.name}${typeof code === "string" ? ` (${code})` : ""}: ${link.message}`);
    } else {
      chain.push(typeof link === "object" ? (JSON.stringify(link) ?? String(link)) : String(link));
      break;
    }
    link = link.cause;
  }
  const frames =
    error instanceof Error ? (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line)) : [];
  return frames.length === 0
    ? { error: chain.join(" <- ") }
    : { error: chain.join(" <- "), stack: frames.join("\n") };
}

/**
 * Codes that mean the database connection, not the statement, failed: the driver's own (the socket
 * closed, the connect timed out), the system's (refused, reset), and PostgreSQL's classes 08
 * (connection exception) and 57P (the server shutting down or starting up), and too many connections.
 */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "53300",
]);

/** Whether a failure (or any cause of it) is the database being unreachable rather than a defect. */
export function isConnectionFailure(error: unknown): boolean {
  let link: unknown = error;
  for (let depth = 0; link instanceof Error && depth < CAUSES_LOGGED; depth++) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === "string" && (CONNECTION_CODES.has(code) || /^(08|57P)/.test(code))) return true;
    link = link.cause;
  }
  return false;
}

/**
 * Whether a failure is a request's own work called off when the request ended early: refused before it
 * was sent, or cancelled in PostgreSQL (57014) after.
 */
export function isCalledOff(error: unknown): boolean {
  let link: unknown = error;
  for (let depth = 0; link instanceof Error && depth < CAUSES_LOGGED; depth++) {
    if (link instanceof RequestAbortedError || (link as { code?: unknown }).code === "57014") return true;
    link = link.cause;
  }
  return false;
}

/**
 * Whether a statement was stopped by a cancel its own request did not send (docs/architecture.md §10):
 * PostgreSQL's cancel names a connection, so one meant for a statement that had just finished stops the
 * next on that connection (query_canceled, and a pipelined neighbour's aborted transaction). Throws the
 * request's RequestAbortedError when the cancel was its own.
 */
function stoppedByStrayCancel(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state !== "57014" && state !== "25P02") return false;
  currentScope()?.throwIfAborted();
  return true;
}

/**
 * Runs `work` once more when a cancel its own request did not send stopped it. Only for work that a
 * cancel leaves undone: a statement sent alone outside any transaction, a whole transaction (the cancel
 * rolled it back), or an export's opening before it has read anything.
 */
export async function againAfterStrayCancel<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!stoppedByStrayCancel(error)) throw error;
    return work();
  }
}

/** The SQLSTATE of a database error, whether the driver threw it or Drizzle wrapped it. */
export function sqlStateOf(error: unknown): string | undefined {
  for (let cause = error; typeof cause === "object" && cause !== null; ) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}
