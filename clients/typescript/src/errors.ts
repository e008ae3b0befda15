/** The envelope's `details`, as docs/api.md §11 lists them by code. */
export type ErrorDetails = Record<string, unknown>;

/**
 * An answer that is not a success, once the retries the specification prescribes are spent. Branch on
 * `code`; a code this client does not know (or a body that is not the envelope, from a proxy in between)
 * keeps the HTTP status to go by.
 */
export class RollcallError extends Error {
  override readonly name = "RollcallError";
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetails | null;
  /** The X-Request-Id of the answer: quote it when reporting a problem. */
  readonly requestId: string | null;

  constructor(
    status: number,
    code: string,
    message: string,
    details: ErrorDetails | null,
    requestId: string | null,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }

  /** The error an answer carries, from its envelope when it has one. */
  static of(response: Response, body: unknown): RollcallError {
    const envelope = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)
      ?.error;
    const code = typeof envelope?.code === "string" ? envelope.code : `http_${response.status}`;
    const message = typeof envelope?.message === "string" ? envelope.message : response.statusText;
    const details =
      typeof envelope?.details === "object" && envelope.details !== null
        ? (envelope.details as ErrorDetails)
        : null;
    return new RollcallError(response.status, code, message, details, response.headers.get("x-request-id"));
  }
}
