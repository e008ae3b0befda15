import type { App } from "./app.ts";
import { errorResponse, internalError } from "./errors.ts";
import { contextOf } from "./gate.ts";

/** An incoming X-Request-Id is echoed only when it is a sane token; anything else gets a fresh id. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Above the 2 MiB contract cap, so that the 413 is ours (with the envelope) and not the runtime's
 * bare one; the body reader stops reading at the contract cap whatever is declared.
 */
const RUNTIME_BODY_LIMIT = 16 * 1024 * 1024;

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
    fetch: async (request) => {
      const incoming = request.headers.get("x-request-id");
      const requestId = incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      let response: Response;
      try {
        response = await app.handle(request);
      } catch {
        response = errorResponse(internalError());
      }
      for (const [name, value] of Object.entries(contextOf(request)?.rateHeaders ?? {})) {
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
