import { processEnv } from "../../src/config.ts";

/** The operator CLI as a child process against a test database, as an operator runs it. */

export type CliResult = { code: number; stdout: string; stderr: string };

export async function runCli(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const child = Bun.spawn(["bun", "src/cli/index.ts", ...args], {
    env: { ...processEnv(), DATABASE_URL: databaseUrl, CI: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}
