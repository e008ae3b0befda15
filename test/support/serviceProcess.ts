import { join } from "node:path";
import type { Subprocess } from "bun";

/**
 * rollcall run the way it is deployed: `bun src/main.ts` as a child process, configured by its
 * environment alone, so a fault test can kill it, signal it, and see its exit code and log lines. A
 * test that drills a fault inside it runs test/support/faultDrillService.ts, which starts src/main.ts.
 */

const repositoryRoot = join(import.meta.dir, "..", "..");

export type ServiceProcess = {
  readonly pid: number;
  readonly port: number;
  /** http://127.0.0.1:PORT, without the /v1. */
  readonly baseUrl: string;
  /** The exit code once it has exited (128 + n for signal n), else null. */
  exitCode(): number | null;
  /** Resolves with the exit code. */
  readonly exited: Promise<number>;
  /** The process's stderr lines so far (its JSON log and any crash report). */
  stderrLines(): string[];
  /** A short account for a failure message: exit code and the last stderr lines. */
  describe(lines?: number): string;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number>;
};

/** Services still running, killed when the test process exits however it exits. */
const running = new Set<Subprocess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Only what the runtime needs from the test's own environment: the service reads nothing else of it. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline >= 0) {
      onLine(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf("\n");
    }
  }
  if (pending !== "") onLine(pending);
}

const LISTENING = /^rollcall listening on http:\/\/127\.0\.0\.1:(\d+)\/v1$/;

export type StartOptions = {
  /** The script run from the repository root: src/main.ts, or a test entry that starts it. */
  entry?: string;
  startTimeoutMs?: number;
};

/**
 * Starts the service and resolves once it prints its listening line. `env` wins over the defaults:
 * HOST=127.0.0.1, PORT=0, DEMO=false, SERVICE_ENVIRONMENT=sandbox.
 */
export async function startService(
  env: Record<string, string>,
  { entry = "src/main.ts", startTimeoutMs = 30_000 }: StartOptions = {},
): Promise<ServiceProcess> {
  const child = Bun.spawn([process.execPath, entry], {
    cwd: repositoryRoot,
    env: {
      ...baseEnv(),
      HOST: "127.0.0.1",
      PORT: "0",
      DEMO: "false",
      SERVICE_ENVIRONMENT: "sandbox",
      ...env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(child);
  let code: number | null = null;
  const exited = child.exited.then((exitCode) => {
    running.delete(child);
    code = exitCode;
    return exitCode;
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  let announce: (port: number) => void = () => {};
  const announced = new Promise<number>((resolve) => {
    announce = resolve;
  });
  void readLines(child.stdout, (line) => {
    stdout.push(line);
    const port = LISTENING.exec(line)?.[1];
    if (port !== undefined) announce(Number(port));
  });
  void readLines(child.stderr, (line) => stderr.push(line));

  const describe = (lines = 15) =>
    `exit code ${code ?? "(running)"}; stdout: ${stdout.slice(-5).join(" | ")}; stderr (last ${lines} lines):\n` +
    stderr.slice(-lines).join("\n");

  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    announced,
    exited.then(() => "exited" as const),
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), startTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (typeof outcome !== "number") {
    child.kill("SIGKILL");
    await exited;
    throw new Error(`rollcall did not start (${outcome}): ${describe()}`);
  }
  const port = outcome;
  return {
    pid: child.pid,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    exitCode: () => code,
    exited,
    stderrLines: () => [...stderr],
    describe,
    signal: (signal) => child.kill(signal),
    async stop(graceMs = 20_000) {
      if (code !== null) return code;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** What a client saw: an HTTP answer, or the connection ended without one, or no answer in time. */
/** `at` is the performance.now() instant the request was sent, `ms` how long it took. */
export type Outcome =
  | { kind: "answer"; status: number; body: unknown; at: number; ms: number }
  | { kind: "dropped"; error: string; at: number; ms: number }
  | { kind: "timeout"; at: number; ms: number };

export type Call = { method: "GET" | "POST"; path: string; body?: unknown; key: string };

/**
 * One request on a connection of its own (no keep-alive: a pooled connection the server had closed
 * would read as a dropped request), never waiting longer than `timeoutMs`.
 */
export async function call(baseUrl: string, request: Call, timeoutMs = 15_000): Promise<Outcome> {
  const started = performance.now();
  const headers: Record<string, string> = { "x-partner-api-key": request.key, connection: "close" };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  try {
    const response = await fetch(baseUrl + request.path, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
      keepalive: false,
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: kept as text, for the assertion to show.
    }
    return { kind: "answer", status: response.status, body, at: started, ms: performance.now() - started };
  } catch (error) {
    const ms = performance.now() - started;
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      return { kind: "timeout", at: started, ms };
    }
    return {
      kind: "dropped",
      error: error instanceof Error ? error.message : String(error),
      at: started,
      ms,
    };
  }
}

/** Whether an answer is the error envelope of the contract: `{ error: { code, message } }`. */
export function isEnvelope(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === "string" && typeof message === "string";
}
