import { accessSync, constants, statSync } from "node:fs";
import { SingleBar } from "cli-progress";
import { readCatalogHealth } from "../store/catalog/catalogHealth.ts";
import { generateCatalog } from "../store/catalog/generate/index.ts";
import { type ImportSuccess, importCatalog, type TableCounts } from "../store/catalog/import.ts";
import { fileLines } from "../store/catalog/lines.ts";
import { feedSource, runFeedImport, runLookup } from "./catalogFeeds.ts";
import {
  CommandError,
  type CommandGroup,
  type Context,
  integerOption,
  parseArguments,
  UsageError,
} from "./command.ts";

/** `catalog import|lookup|generate`: the event catalog as JSON Lines or providers' answer pages (docs/operations.md §3). */

/** Bytes of output gathered before each write: few, large writes keep generation fast. */
const WRITE_CHUNK = 1 << 20;
const MAX_EVENTS = 100_000_000;

function formatCount(value: number): string {
  return value.toLocaleString("en-US");
}

function countsLine(label: string, counts: TableCounts): string {
  return `  ${label.padEnd(11)}${formatCount(counts.inFile).padStart(12)} in file: ${formatCount(counts.inserted)} new, ${formatCount(counts.updated)} changed, ${formatCount(counts.unchanged)} unchanged`;
}

/** Seconds between progress lines when the output is not a terminal (a log file, a pipe). */
const PLAIN_PROGRESS_SECONDS = 5;

/** Plain progress lines for a log: one every few seconds while reading, and none for a short import. */
function progressLines(context: Context, totalBytes: number) {
  let last = performance.now();
  return {
    update(bytes: number, lines: number) {
      if (performance.now() - last < PLAIN_PROGRESS_SECONDS * 1000) return;
      last = performance.now();
      const percent = totalBytes === 0 ? 100 : Math.floor((bytes / totalBytes) * 100);
      context.err(`importing: ${percent}% (${formatCount(lines)} lines read)`);
    },
    stop: () => {},
  };
}

/** A progress bar on a terminal, drawn from the first line read (not while the database opens). */
function progressBar(context: Context, totalBytes: number) {
  if (!context.interactive) return progressLines(context, totalBytes);
  if (totalBytes === 0) return null;
  const bar = new SingleBar({
    format: "importing [{bar}] {percentage}% | {mb}/{totalMb} MB | {lines} lines | eta {eta_formatted}",
    hideCursor: true,
  });
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(0);
  let started = false;
  return {
    update(bytes: number, lines: number) {
      if (!started) bar.start(totalBytes, 0, { mb: "0", totalMb: mb(totalBytes), lines: "0" });
      started = true;
      bar.update(bytes, { mb: mb(bytes), lines: formatCount(lines) });
    },
    stop: () => bar.stop(),
  };
}

function report(context: Context, file: string, result: ImportSuccess, seconds: number): void {
  const rate = Math.round(result.events.inFile / seconds);
  context.out(
    `Imported ${file} in ${seconds.toFixed(1)} s (${formatCount(rate)} events/s); catalog version ${result.version}.`,
  );
  context.out(countsLine("venues", result.venues));
  context.out(countsLine("performers", result.performers));
  context.out(countsLine("events", result.events));
  if (result.deferredEvents > 0) {
    context.out(
      `  ${formatCount(result.deferredEvents)} events named a venue defined further down the file.`,
    );
  }
  if (result.rezonedVenues > 0) {
    context.out(
      `  ${result.rezonedVenues} venues changed time zone; their events' instants were recomputed.`,
    );
  }
  if (result.correctedEvents > 0) {
    context.out(
      `  ${formatCount(result.correctedEvents)} events corrected: running servers place their kept items again (catalog status shows progress).`,
    );
  }
}

/** Why a catalog file cannot be read, in the system's words (no such file, permission denied...). */
function unreadable(file: string, error: unknown): CommandError {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const reasons: Record<string, string> = {
    ENOENT: "no such file",
    EACCES: "permission denied",
    EISDIR: "it is a directory, not a catalog file",
  };
  const reason = typeof code === "string" ? (reasons[code] ?? String(message)) : String(message);
  return new CommandError(`cannot read ${file}: ${reason}`);
}

export const catalog: CommandGroup = {
  name: "catalog",
  subcommands: {
    import: {
      usage: "<file.jsonl> | --format ticketmaster|seatgeek <page.json>...",
      summary:
        "validate and import a JSON Lines catalog or feed answer pages (all or nothing; upserts by id)",
      async run(args, context) {
        const { positionals, values } = parseArguments(
          args,
          { format: { type: "string" } },
          { min: 1, max: Number.POSITIVE_INFINITY },
        );
        const format = values.format ?? "jsonl";
        if (format !== "jsonl") return runFeedImport(feedSource(format), positionals, context);
        if (positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`);
        const file = positionals[0] ?? "";
        let size: number;
        try {
          const stats = statSync(file);
          if (stats.isDirectory()) throw new CommandError(`${file} is a directory, not a catalog file`);
          accessSync(file, constants.R_OK);
          size = stats.size;
        } catch (error) {
          if (error instanceof CommandError) throw error;
          throw unreadable(file, error);
        }
        const started = performance.now();
        const bar = progressBar(context, size);
        const result = await context
          .withStore((store) =>
            importCatalog(store, fileLines(file), {
              onProgress: (progress) => {
                if (progress.phase === "read") bar?.update(progress.bytes, progress.lines);
                else bar?.stop();
              },
            }),
          )
          .finally(() => bar?.stop());
        if (!result.ok) {
          for (const error of result.errors) context.err(`line ${error.line}: ${error.message}`);
          const more = result.errorCount - result.errors.length;
          if (more > 0) context.err(`... and ${formatCount(more)} more bad lines`);
          throw new CommandError(
            `${formatCount(result.errorCount)} bad lines in ${file}; nothing was imported`,
          );
        }
        report(context, file, result, (performance.now() - started) / 1000);
      },
    },
    status: {
      usage: "",
      summary: "the catalog's version, size, last import and corrections still to be placed",
      async run(args, context) {
        parseArguments(args, {}, { min: 0, max: 0 });
        const health = await context.withStore((store) => readCatalogHealth(store));
        context.out(`catalog version   ${health.version}`);
        context.out(`last import       ${health.importedAt?.toISOString() ?? "never"}`);
        context.out(`venues            ${formatCount(health.venues)}`);
        context.out(`events            ${formatCount(health.events)}`);
        context.out(
          `corrections       ${health.pendingCorrections === 0 ? "none pending" : `${formatCount(health.pendingCorrections)} events whose kept items are still to be placed again`}`,
        );
      },
    },
    lookup: {
      usage:
        "[--external-id ID [--source ticketmaster|seatgeek]] [--name TEXT] [--venue TEXT] [--date YYYY-MM-DD] [--json]",
      summary: "find events by a feed's external id, name, venue and local date",
      run: runLookup,
    },
    generate: {
      usage: "--events N [--seed S]",
      summary: "write a deterministic synthetic catalog (JSON Lines) to stdout",
      async run(args, context) {
        const { values } = parseArguments(
          args,
          { events: { type: "string" }, seed: { type: "string" } },
          { min: 0, max: 0 },
        );
        if (values.events === undefined) throw new UsageError("--events is required");
        const events = integerOption("events", values.events, 1, MAX_EVENTS);
        const seed = values.seed === undefined ? 1 : integerOption("seed", values.seed, 0, 2 ** 31 - 1);
        let buffer = "";
        for (const line of generateCatalog({ events, seed })) {
          buffer += `${line}\n`;
          if (buffer.length >= WRITE_CHUNK) {
            await context.write(buffer);
            buffer = "";
          }
        }
        await context.write(buffer);
      },
    },
  },
};
