/*
 * How a finished JSON body leaves the server. The runtime (Bun 1.4.5) writes an answer given after an
 * `await` in one `send()` only while it fits its send buffer, about 16 KB with the headers; past that it
 * writes the status line, each header's name, colon and value, and the body apart, in `send()` calls of
 * their own, each of which may wake the client (docs/performance.md §12, oven-sh/bun#41341). A
 * direct stream that writes the whole body at once leaves in one `send()`, with chunked framing instead
 * of a Content-Length. Smaller bodies keep the plain form and their Content-Length.
 */

/**
 * The media type of every JSON answer, spelled as the runtime spells it on the answers the framework
 * serialises itself, so a client comparing the header text sees one value on every status.
 */
export const JSON_MEDIA_TYPE = "application/json;charset=utf-8";

/** Bodies from this many UTF-16 units (at least as many UTF-8 bytes) are streamed: well under 16 KB. */
const STREAMED_FROM_CHARS = 8192;

export function jsonResponse(
  text: string,
  { status = 200, headers: extra = {} }: { status?: number; headers?: Record<string, string> } = {},
): Response {
  const headers = { "content-type": JSON_MEDIA_TYPE, ...extra };
  if (text.length < STREAMED_FROM_CHARS) return new Response(text, { status, headers });
  const body = new ReadableStream({
    type: "direct",
    pull(controller) {
      controller.write(text);
      controller.close();
    },
  });
  return new Response(body, { status, headers });
}
