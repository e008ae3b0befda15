import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { processEnv } from "../../src/config.ts";
import { WORK_DIR } from "./catalog.ts";

const REPO = join(import.meta.dir, "..", "..");
export const PROFILE_DIR = join(WORK_DIR, "profiles");
const READY = /listening on (http:\/\/\S+?)\/v1\b/;

/** A server process this tool started; `baseUrl` ends before `/v1`. */
export type ServerProcess = { baseUrl: string; pid: number; logPath: string; stop(): Promise<void> };

/**
 * Starts `bun <entry>` and resolves once it prints its listening line. The port is 0 (the kernel picks a
 * free one, read back from that line); stderr (the JSON log) goes to a file under /tmp for post-mortems.
 */
export async function startServer(
  entry: string,
  env: Record<string, string>,
  options: { label: string; readyTimeoutMs: number; profile?: boolean },
): Promise<ServerProcess> {
  mkdirSync(WORK_DIR, { recursive: true });
  const logPath = join(WORK_DIR, `${options.label}-${Date.now()}.log`);
  // A CPU profile (markdown, for reading where the server's time goes) is written when the server exits.
  const profile = options.profile ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = Bun.spawn(["bun", ...profile, entry], {
    cwd: REPO,
    env: { ...processEnv(), PORT: "0", HOST: "127.0.0.1", ...env },
    stdout: "pipe",
    stderr: Bun.file(logPath),
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await child.exited;
    clearTimeout(timer);
  };
  try {
    const baseUrl = await readyUrl(child.stdout, child.exited, options.readyTimeoutMs);
    return { baseUrl, pid: child.pid, logPath, stop };
  } catch (error) {
    await stop();
    throw new Error(`${options.label} did not start: ${(error as Error).message} (log: ${logPath})`);
  }
}

/** Reads stdout up to the listening line, then keeps draining it so the child never blocks on a full pipe. */
async function readyUrl(stdout: ReadableStream<Uint8Array>, exited: Promise<number>, timeoutMs: number) {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no listening line after ${timeoutMs} ms`)), timeoutMs);
  });
  const died = exited.then((code) => Promise.reject(new Error(`exited with code ${code}`)));
  const found = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout closed before the listening line: ${seen.trim()}`);
      seen += decoder.decode(value, { stream: true });
      const match = READY.exec(seen);
      if (match?.[1]) return match[1];
    }
  })();
  try {
    return await Promise.race([found, timeout, died]);
  } finally {
    clearTimeout(timer);
    void (async () => {
      while (!(await reader.read()).done) {}
    })().catch(() => {});
  }
}
