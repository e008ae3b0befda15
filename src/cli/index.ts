import { once } from "node:events";
import { ConfigError, isInteractive, loadConfig } from "../config.ts";
import { openStore } from "../store/db.ts";
import { catalog } from "./catalog.ts";
import { CommandError, type CommandGroup, type Context, type Subcommand, UsageError } from "./command.ts";
import { confidence } from "./confidence.ts";
import { keys } from "./keys.ts";
import { partners } from "./partners.ts";
import { migrate, status } from "./status.ts";

/**
 * The operator CLI (docs/operations.md §2): `bun run cli <group> <command> [arguments]`. Exit codes: 0 done,
 * 1 the command failed (bad configuration, unknown partner, bad catalog lines...), 2 wrong usage.
 * It opens the store exactly as the server does: DATABASE_URL, else the embedded database in DATA_DIR.
 */

const groups: CommandGroup[] = [partners, keys, catalog, confidence];

/** Commands about the service as a whole, one word each. */
const commands: Record<string, Subcommand> = { migrate, status };

function usage(only?: CommandGroup): string[] {
  const lines = ["usage: bun run cli <command> [arguments]", ""];
  if (only === undefined) {
    for (const [name, command] of Object.entries(commands)) {
      lines.push(`  ${name} ${command.usage}`.trimEnd());
      lines.push(`      ${command.summary}`);
    }
  }
  for (const group of only ? [only] : groups) {
    for (const [name, command] of Object.entries(group.subcommands)) {
      lines.push(`  ${group.name} ${name} ${command.usage}`.trimEnd());
      lines.push(`      ${command.summary}`);
    }
  }
  lines.push(
    "",
    "The CLI uses the server's database: DATABASE_URL, else the embedded one under DATA_DIR (./.data).",
    "Stop a server running on the embedded database first: only one process can open it.",
  );
  return lines;
}

const context: Context = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  async write(chunk) {
    if (!process.stdout.write(chunk)) await once(process.stdout, "drain");
  },
  interactive: isInteractive(),
  async withStore(work, options = {}) {
    const store = await openStore({
      ...loadConfig(),
      migrate: options.migrate ?? true,
      onMigration: options.onMigration ?? ((name) => console.error(`applied migration ${name}`)),
    });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  },
};

function isHelp(arg: string | undefined): boolean {
  return arg === "help" || arg === "--help" || arg === "-h";
}

async function main(argv: string[]): Promise<number> {
  const [groupName, commandName, ...args] = argv;
  if (groupName === undefined || isHelp(groupName)) {
    for (const line of usage()) (groupName === undefined ? context.err : context.out)(line);
    return groupName === undefined ? 2 : 0;
  }
  const single = Object.hasOwn(commands, groupName) ? commands[groupName] : undefined;
  if (single !== undefined) return run(groupName, single, argv.slice(1));
  const group = groups.find((g) => g.name === groupName);
  if (group === undefined) {
    context.err(`error: unknown command ${JSON.stringify(groupName)}`);
    for (const line of usage()) context.err(line);
    return 2;
  }
  const command =
    commandName !== undefined && Object.hasOwn(group.subcommands, commandName)
      ? group.subcommands[commandName]
      : undefined;
  if (command === undefined || commandName === undefined) {
    if (isHelp(commandName)) {
      for (const line of usage(group)) context.out(line);
      return 0;
    }
    context.err(`error: ${commandName === undefined ? "missing" : "unknown"} ${group.name} command`);
    for (const line of usage(group)) context.err(line);
    return 2;
  }
  return run(`${group.name} ${commandName}`, command, args);
}

/** Runs one command, `name` as its usage line spells it, and maps its failures to exit codes. */
async function run(name: string, command: Subcommand, args: string[]): Promise<number> {
  if (args.some(isHelp)) {
    context.out(`usage: bun run cli ${name} ${command.usage}`);
    context.out(`  ${command.summary}`);
    return 0;
  }
  try {
    await command.run(args, context);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      context.err(`error: ${error.message}`);
      context.err(`usage: bun run cli ${name} ${command.usage}`);
      return 2;
    }
    if (error instanceof CommandError || error instanceof ConfigError) {
      context.err(`error: ${error.message}`);
      return 1;
    }
    context.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

// A reader that goes away early (`catalog generate | head`) is not an error worth a stack trace. Any
// other failure to write (a full disk: ENOSPC) ends the command with exit 1: throwing from this
// handler would leave a generator spinning against a stream that accepts nothing.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  process.stderr.write(`error: cannot write the output: ${error.message}\n`);
  process.exit(1);
});

process.exitCode = await main(process.argv.slice(2));
