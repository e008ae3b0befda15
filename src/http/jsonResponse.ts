import { JSON_MEDIA_TYPE } from "./errors.ts";

/*
 * How a finished JSON body leaves the server. The runtime (Bun 1.4.5) writes an answer given after an
 * `await` in one `send()` only while it fits its send buffer, about 16 KB with the headers; past that it
 * writes the status line, each header's name, colon and value, and the body apart, some fifteen
 * `send()` calls, each of which may wake the client (docs/performance.md §12, oven-sh/bun#41341). A
 * direct stream that writes the whole body at once leaves in one `send()`, with chunked framing instead
 * of a Content-Length. Smaller bodies keep the plain form and their Content-Length.
 */

/** Bodies from this many UTF-16 units (at least as many UTF-8 bytes) are streamed: well under 16 KB. */
const STREAMED_FROM_CHARS = 8192;

export function jsonResponse(text: string): Response {
  const headers = { "content-type": JSON_MEDIA_TYPE };
  if (text.length < STREAMED_FROM_CHARS) return new Response(text, { headers });
  const body = new ReadableStream({
    type: "direct",
    pull(controller) {
      controller.write(text);
      controller.close();
    },
  });
  return new Response(body, { headers });
}
