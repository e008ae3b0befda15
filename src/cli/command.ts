import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Store } from "../store/db.ts";
import { PARTNER_ID } from "../store/keys.ts";
import type { OnMigration } from "../store/migrations.ts";

/**
 * The shape every CLI command group shares. A group is a table of subcommands, so adding one (such as
 * `partners limits`) is one more entry in its table; index.ts dispatches and maps errors to exit codes.
 */

/** Wrong arguments: exit code 2, with the command's usage line. */
export class UsageError extends Error {}

/** The command understood its arguments but could not do what they asked: exit code 1. */
export class CommandError extends Error {}

export type Context = {
  out(line: string): void;
  err(line: string): void;
  /** Writes bulk output to stdout, waiting while the reader catches up. */
  write(chunk: string): Promise<void>;
  /** Whether stdout is a terminal a progress bar may be drawn on. */
  interactive: boolean;
  /**
   * Opens the store with the server's configuration, runs `work`, and closes the store. Pending
   * migrations are applied first (unless `migrate` is false), each named to `onMigration`, by default a
   * line on stderr: a command never changes the schema unsaid.
   */
  withStore<T>(work: (store: Store) => Promise<T>, options?: StoreOptions): Promise<T>;
};

export type StoreOptions = { migrate?: boolean; onMigration?: OnMigration };

export type Subcommand = {
  /** Arguments after the subcommand name, e.g. `<partner_id> [--name NAME]`. */
  usage: string;
  summary: string;
  run(args: string[], context: Context): Promise<void>;
};

export type CommandGroup = { name: string; subcommands: Record<string, Subcommand> };

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses a subcommand's arguments strictly (unknown options are errors) and checks the number of
 * positionals, turning every problem into a UsageError.
 */
export function parseArguments<T extends Options>(
  args: string[],
  options: T,
  positionals: { min: number; max: number },
) {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) throw new UsageError("missing argument");
  if (count > positionals.max)
    throw new UsageError(`unexpected argument: ${parsed.positionals[positionals.max]}`);
  return parsed;
}

/** A partner id argument, refused as a usage error when no partner could ever have it (docs/api.md §10). */
export function partnerIdArgument(value: string | undefined): string {
  const id = value ?? "";
  if (!PARTNER_ID.test(id)) {
    throw new UsageError(
      `partner_id must be 1 to 64 characters of a-z, 0-9 and _, got ${JSON.stringify(id)}`,
    );
  }
  return id;
}

/**
 * A free-text option such as a label or a name, trimmed; empty means not given. Control and format
 * characters (a newline, a bidi override) and line separators are refused: the value is printed in
 * tables and one-line logs, where they would break or disguise the line.
 */
export function textOption(name: string, value: string | undefined): string | null {
  const text = value?.trim() ?? "";
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(text)) {
    throw new UsageError(`--${name} must be one line of visible text`);
  }
  return text === "" ? null : text;
}

/** A strict non-negative decimal integer within bounds, or a UsageError naming the option. */
export function integerOption(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** Left-aligned columns for human-readable listings (`--json` is the format for scripts). */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
