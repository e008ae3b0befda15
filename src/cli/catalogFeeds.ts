import { FEED_SOURCES, type FeedSource } from "../store/catalog/feeds/feedPage.ts";
import { importFeed } from "../store/catalog/feeds/importFeed.ts";
import { LOOKUP_LIMIT, lookupEvents } from "../store/catalog/feeds/lookup.ts";
import { CommandError, type Context, parseArguments, table, textOption, UsageError } from "./command.ts";

/** The feed half of `catalog`: `import --format ticketmaster|seatgeek FILE…` and `lookup` (docs/operations.md §3). */

export function feedSource(format: string): FeedSource {
  const source = FEED_SOURCES.find((s) => s === format);
  if (source === undefined) {
    throw new UsageError(
      `--format must be jsonl, ${FEED_SOURCES.join(" or ")}, got ${JSON.stringify(format)}`,
    );
  }
  return source;
}

const count = (n: number) => n.toLocaleString("en-US");

export async function runFeedImport(source: FeedSource, files: string[], context: Context): Promise<void> {
  const started = performance.now();
  const result = await context.withStore((store) => importFeed(store, source, files));
  if (!result.ok) {
    for (const error of result.errors) context.err(`${error.place}: ${error.message}`);
    throw new CommandError(
      `${count(result.errorCount)} problems in the ${source} pages; nothing was imported`,
    );
  }
  const seconds = (performance.now() - started) / 1000;
  context.out(
    `Imported ${files.length} ${source} files in ${seconds.toFixed(1)} s; catalog version ${result.version}.`,
  );
  for (const [label, counts] of [
    ["venues", result.venues],
    ["performers", result.performers],
    ["events", result.events],
  ] as const) {
    context.out(
      `  ${label.padEnd(11)}${count(counts.inFile).padStart(8)} read: ${count(counts.inserted)} new, ${count(counts.updated)} changed, ${count(counts.unchanged)} unchanged`,
    );
  }
  if (result.correctedEvents > 0) {
    context.out(
      `  ${count(result.correctedEvents)} events corrected: running servers place their kept items again (catalog status shows progress).`,
    );
  }
  if (result.linked > 0)
    context.out(`  ${count(result.linked)} events are shows another source already lists: linked to them.`);
  for (const notice of result.skipped) context.out(`  skipped: ${notice.place}: ${notice.message}`);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function runLookup(args: string[], context: Context): Promise<void> {
  const { values } = parseArguments(
    args,
    {
      "external-id": { type: "string" },
      source: { type: "string" },
      name: { type: "string" },
      venue: { type: "string" },
      date: { type: "string" },
      json: { type: "boolean" },
    },
    { min: 0, max: 0 },
  );
  const query = {
    externalId: textOption("external-id", values["external-id"]),
    source: values.source === undefined ? null : feedSource(values.source),
    name: textOption("name", values.name),
    venue: textOption("venue", values.venue),
    date: textOption("date", values.date),
  };
  if (query.source !== null && query.externalId === null) {
    throw new UsageError("--source narrows --external-id: give both");
  }
  if (query.date !== null && !DATE.test(query.date)) throw new UsageError("--date must be YYYY-MM-DD");
  if (query.externalId === null && query.name === null && query.venue === null && query.date === null) {
    throw new UsageError("give at least one of --external-id, --name, --venue, --date");
  }
  const found = await context.withStore((store) => lookupEvents(store, query));
  if (values.json) {
    for (const event of found) context.out(JSON.stringify(event));
    return;
  }
  if (found.length === 0) {
    context.out("No event matches.");
    return;
  }
  const rows = found.map((e) => [
    String(e.id),
    e.name,
    e.venue,
    e.time_unknown ? `${e.starts_at_local.slice(0, 10)} (time unknown)` : e.starts_at_local,
    e.status,
    e.external_ids.join(" "),
  ]);
  for (const line of table(["ID", "NAME", "VENUE", "STARTS", "STATUS", "EXTERNAL IDS"], rows))
    context.out(line);
  if (found.length === LOOKUP_LIMIT)
    context.out(`(the first ${LOOKUP_LIMIT}; narrow the search to see others)`);
}
