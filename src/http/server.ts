import type { App } from "./app.ts";
import { ApiError, errorResponse, internalError } from "./errors.ts";
import { contextOf } from "./gate.ts";

/** An incoming X-Request-Id is echoed only when it is a sane token; anything else gets a fresh id. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * No runtime limit of its own, so that every 413 is ours, with the envelope and after the key check
 * (contract §2), however large the upload: the body reader refuses a declared length over the 2 MiB
 * cap before reading any of it, and stops reading a chunked body as soon as it crosses the cap.
 */
const RUNTIME_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The framework finds a request's path by searching its URL for the first "/" from the twelfth
 * character on, which assumes a host of at least four characters after "http://": a request to
 * `Host: api` would be routed as an unknown path. Shorter hosts are rewritten to one it can read;
 * nothing in the service reads the host.
 */
const SHORTEST_ROUTABLE_HOST = 4;

/**
 * The request as the app can route it, or null when its URL does not parse: the runtime builds the
 * URL from the Host header, so a malformed one (`x:99999`, `a b`) is the client's error, not ours.
 */
function routable(request: Request): Request | null {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return null;
  }
  if (url.host.length >= SHORTEST_ROUTABLE_HOST) return request;
  return new Request(`http://localhost${url.pathname}${url.search}`, request);
}

const badHost = () => new ApiError("invalid_request", "The Host header does not name a valid host.");

export type Listening = {
  port: number;
  stop(): Promise<void>;
};

/**
 * Serves the app. This wrapper is the last word on every response: it adds X-Request-Id and the
 * RateLimit headers, and turns anything that still escaped the framework into the envelope.
 */
export function serve(app: App, options: { port: number; host: string }): Listening {
  const server = Bun.serve({
    port: options.port,
    hostname: options.host,
    maxRequestBodySize: RUNTIME_BODY_LIMIT,
    fetch: async (received) => {
      const request = routable(received);
      const incoming = received.headers.get("x-request-id");
      const requestId = incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      let response: Response;
      try {
        response = request === null ? errorResponse(badHost()) : await app.handle(request);
      } catch {
        response = errorResponse(internalError());
      }
      const rateHeaders = request === null ? {} : contextOf(request)?.rateHeaders;
      for (const [name, value] of Object.entries(rateHeaders ?? {})) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
      response.headers.set("x-request-id", requestId);
      return response;
    },
  });
  return {
    port: server.port ?? options.port,
    stop: () => server.stop(),
  };
}
