import { createReadStream, statSync } from "node:fs";
/**
 * Line sources for the importer. Lines arrive in batches (one per chunk read) so the per-line loop stays
 * synchronous: an `await` per line would cost more than parsing the line.
 */

export type LineBatch = {
  lines: string[];
  /** Indexes into `lines` of lines that were not valid UTF-8 (their text holds U+FFFD instead). */
  invalidUtf8: number[];
  /** Bytes of input this batch consumed, for a progress bar. */
  bytes: number;
};

const NEWLINE = 0x0a;
const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

function withoutCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** Decodes complete lines; only when the chunk holds invalid UTF-8 does it fall back to line by line. */
function decodeLines(bytes: Uint8Array): Pick<LineBatch, "lines" | "invalidUtf8"> {
  try {
    return { lines: strict.decode(bytes).split("\n").map(withoutCarriageReturn), invalidUtf8: [] };
  } catch {
    const lines: string[] = [];
    const invalidUtf8: number[] = [];
    let start = 0;
    while (start <= bytes.length) {
      const end = bytes.indexOf(NEWLINE, start);
      const stop = end === -1 ? bytes.length : end;
      const slice = bytes.subarray(start, stop);
      try {
        lines.push(withoutCarriageReturn(strict.decode(slice)));
      } catch {
        invalidUtf8.push(lines.length);
        lines.push(lenient.decode(slice));
      }
      start = stop + 1;
    }
    return { lines, invalidUtf8 };
  }
}

/** Reads of what is not a regular file: a chunk is split into lines and decoded as a whole. */
const READ_CHUNK_BYTES = 1024 * 1024;

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/**
 * The file's bytes in chunks. A regular file goes through the runtime's own file stream, which costs an
 * import less CPU than node:fs; anything else (`/dev/null`, a named pipe), which that stream refuses,
 * through node:fs.
 */
function fileChunks(path: string): AsyncIterable<Uint8Array> {
  if (statSync(path).isFile()) return Bun.file(path).stream();
  return createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
}

/** Streams a file as batches of lines, splitting on bytes so a multi-byte character never straddles chunks. */
export async function* fileLines(path: string): AsyncGenerator<LineBatch> {
  let carry: Uint8Array = new Uint8Array(0);
  let unreported = 0;
  for await (const chunk of fileChunks(path)) {
    unreported += chunk.byteLength;
    const bytes = concat(carry, chunk);
    const lastNewline = bytes.lastIndexOf(NEWLINE);
    if (lastNewline === -1) {
      carry = bytes;
      continue;
    }
    carry = bytes.slice(lastNewline + 1);
    yield { ...decodeLines(bytes.subarray(0, lastNewline)), bytes: unreported };
    unreported = 0;
  }
  if (carry.length > 0) yield { ...decodeLines(carry), bytes: unreported };
}

/** Wraps in-memory lines (the demo catalog, tests) as a line source. */
export async function* memoryLines(lines: Iterable<string>, batchSize = 5000): AsyncGenerator<LineBatch> {
  let batch: string[] = [];
  for (const line of lines) {
    batch.push(line);
    if (batch.length === batchSize) {
      yield { lines: batch, invalidUtf8: [], bytes: 0 };
      batch = [];
    }
  }
  if (batch.length > 0) yield { lines: batch, invalidUtf8: [], bytes: 0 };
}
