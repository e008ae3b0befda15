import { DrizzleQueryError } from "drizzle-orm";

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
