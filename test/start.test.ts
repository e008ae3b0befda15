import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processEnv } from "../src/config.ts";

/**
 * A fresh clone's first command: `bun src/main.ts` with no DATABASE_URL starts on the embedded database,
 * loads the demo catalog, prints a demo key, answers /v1/ping, and exits 0 on SIGTERM.
 */

const dataDir = mkdtempSync(join(tmpdir(), "rollcall-start-"));

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}-second`, { recursive: true, force: true });
  rmSync(`${dataDir}-corrupt`, { recursive: true, force: true });
});

type Started = { child: Bun.Subprocess<"ignore", "pipe", "pipe">; baseUrl: string; output: () => string };

/** Starts the server and resolves once it prints where it listens; the rest of its output keeps draining. */
async function start(host = "127.0.0.1"): Promise<Started> {
  // The embedded default is what is under test: nothing may point the child at a server database.
  const { DATABASE_URL: _url, DEMO: _demo, ...inherited } = processEnv();
  const env = { ...inherited, DATA_DIR: dataDir, PORT: "0", HOST: host, CI: "1", WORKERS: "0" };
  const child = Bun.spawn(["bun", "src/main.ts"], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let stdout = "";
  let stderr = "";
  const drain = async (stream: ReadableStream<Uint8Array>, append: (text: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) append(decoder.decode(chunk, { stream: true }));
  };
  void drain(child.stderr, (text) => {
    stderr += text;
  });
  const listening = new Promise<string>((resolve, reject) => {
    void drain(child.stdout, (text) => {
      stdout += text;
      const match = /rollcall listening on (http:\/\/\S+\/v1)/.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    }).then(() => reject(new Error(`the server stopped before listening:\n${stdout}\n${stderr}`)));
  });
  const baseUrl = await listening;
  return { child, baseUrl, output: () => stdout };
}

/** Starts a second server on its own data directory, expecting it to fail: its output and exit code. */
async function failedStart(
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; code: number }> {
  const { DATABASE_URL: _url, DEMO: _demo, ...inherited } = processEnv();
  const second = Bun.spawn(["bun", "src/main.ts"], {
    env: { ...inherited, DATA_DIR: `${dataDir}-second`, DEMO: "false", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(second.stdout).text(),
    new Response(second.stderr).text(),
    second.exited,
  ]);
  return { stdout, stderr, code };
}

async function stop(started: Started): Promise<number> {
  started.child.kill("SIGTERM");
  return started.child.exited;
}

describe("bun src/main.ts on the embedded database", () => {
  let demoKey = "";
  /** A first start creates the embedded database and loads the demo catalog: seconds, not milliseconds. */
  const STARTUP_MS = 60_000;

  test(
    "starts, loads the demo, answers /v1/ping and /v1/health, stops cleanly on SIGTERM",
    async () => {
      const server = await start();
      try {
        const ping = await fetch(`${server.baseUrl}/ping`);
        expect(ping.status).toBe(200);
        expect(await ping.json()).toEqual({ status: "ok", version: "v1" });
        const keyLine = /key \(shown only this once\): (demo-\S+)/.exec(server.output());
        demoKey = keyLine?.[1] ?? "";
        expect(demoKey).toMatch(/^demo-[A-Za-z0-9_-]{43}$/);
        expect(server.output()).toContain(`curl -H "X-PARTNER-API-KEY: ${demoKey}"`);
        expect(server.output()).toContain("Loaded a demo catalog: 20000 events");
        const health = await fetch(`${server.baseUrl}/health`, { headers: { "X-PARTNER-API-KEY": demoKey } });
        expect(health.status).toBe(200);
      } finally {
        expect(await stop(server)).toBe(0);
      }
    },
    STARTUP_MS,
  );

  test(
    "a restart keeps the demo data and prints no new key",
    async () => {
      const server = await start();
      try {
        expect(server.output()).not.toContain("shown only this once");
        expect(server.output()).not.toContain("Loaded a demo catalog");
        const health = await fetch(`${server.baseUrl}/health`, { headers: { "X-PARTNER-API-KEY": demoKey } });
        expect(health.status).toBe(200);
      } finally {
        expect(await stop(server)).toBe(0);
      }
    },
    STARTUP_MS,
  );

  test(
    "a port already taken stops the start with one line naming the address, and exit 1",
    async () => {
      const server = await start();
      try {
        const port = new URL(server.baseUrl).port;
        const { stdout, stderr, code } = await failedStart({ PORT: port, HOST: "127.0.0.1", DEMO: "true" });
        expect(code).toBe(1);
        expect(stderr.trim().split("\n")).toEqual([
          expect.stringContaining(`cannot listen on 127.0.0.1:${port}`),
        ]);
        // Found before anything starts: no demo loaded, no one-time key printed for a server that never
        // listens, no embedded database created.
        expect(stdout).toBe("");
        expect(existsSync(`${dataDir}-second`)).toBe(false);
      } finally {
        expect(await stop(server)).toBe(0);
      }
    },
    STARTUP_MS,
  );

  test("a DATA_DIR that holds no database of ours is named in one line", async () => {
    const corrupt = `${dataDir}-corrupt`;
    mkdirSync(corrupt, { recursive: true });
    writeFileSync(join(corrupt, "PG_VERSION"), "not a version\n");
    const { stderr, code } = await failedStart({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: corrupt });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n").at(-1)).toStartWith(
      `rollcall could not start: the embedded database in DATA_DIR=${corrupt} could not be opened (`,
    );
  });

  test("a HOST that resolves to no address is named as such, not as a port in use", async () => {
    for (const host of ["not-a-host.invalid", "999.1.1.1"]) {
      const { stderr, code } = await failedStart({ PORT: "0", HOST: host });
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toEqual([
        `rollcall could not start: cannot listen on ${host}:0: HOST resolves to no address (ENOTFOUND)`,
      ]);
    }
  });

  test(
    "an IPv6 host is written in brackets in the address it prints",
    async () => {
      const server = await start("::1");
      try {
        expect(server.baseUrl).toMatch(/^http:\/\/\[::1\]:\d+\/v1$/);
        expect((await fetch(`${server.baseUrl}/ping`)).status).toBe(200);
      } finally {
        expect(await stop(server)).toBe(0);
      }
    },
    STARTUP_MS,
  );
});
