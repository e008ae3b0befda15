import { readFileSync } from "node:fs";
import { type FeedNotice, type FeedPage, type FeedSource, NotAnAnswer } from "./feedPage.ts";
import { readSeatGeekPage } from "./seatgeek.ts";
import { readTicketmasterPage } from "./ticketmaster.ts";

/**
 * The answer pages an operator saved: each file one page (a JSON document, pretty-printed or not) or
 * JSON Lines of pages. Every page is read before anything is written; a file in the wrong format or a
 * page that is not such an answer is reported with its place (file, line, event) and the import stops.
 */

const READERS: Record<FeedSource, (page: unknown, place: string) => FeedPage> = {
  ticketmaster: readTicketmasterPage,
  seatgeek: readSeatGeekPage,
};

export type FeedFiles = { pages: FeedPage[]; errors: FeedNotice[] };

function readPage(source: FeedSource, text: string, place: string, into: FeedFiles): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    into.errors.push({ place, message: "not valid JSON" });
    return;
  }
  try {
    into.pages.push(READERS[source](value, place));
  } catch (error) {
    if (!(error instanceof NotAnAnswer)) throw error;
    into.errors.push({ place: error.place, message: error.detail });
  }
}

export function readFeedFiles(source: FeedSource, paths: readonly string[]): FeedFiles {
  const read: FeedFiles = { pages: [], errors: [] };
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      read.errors.push({ place: path, message: "cannot be read" });
      continue;
    }
    const body = text.replace(/^\uFEFF/, "");
    const whole = body.trim();
    if (whole.length === 0) {
      read.errors.push({ place: path, message: "is empty" });
      continue;
    }
    if (isJson(whole)) {
      readPage(source, whole, path, read);
      continue;
    }
    const lines = body.split("\n");
    // A broken pretty-printed page is one error, not one per line.
    if (!isJson(lines.find((line) => line.trim() !== "") ?? "")) {
      read.errors.push({
        place: path,
        message: "not valid JSON: neither one answer page nor JSON Lines of pages",
      });
      continue;
    }
    lines.forEach((line, index) => {
      if (line.trim() !== "") readPage(source, line, `${path} line ${index + 1}`, read);
    });
  }
  return read;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
