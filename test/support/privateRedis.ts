import type { Subprocess } from "bun";
import { Redis } from "ioredis";
import { freePort } from "./processes.ts";

/**
 * A redis-server of a test's own on a free port, with nothing saved to disk, so a test can take it
 * away and bring it back without touching the Redis other tests share (port 6379).
 */
export type PrivateRedis = {
  readonly url: string;
  /** Starts it (again, empty) on the same port. */
  start(): Promise<void>;
  /** kill -9: the service sees its connection drop with no goodbye. */
  kill(): Promise<void>;
  /** Keys matching `pattern`. */
  keys(pattern: string): Promise<string[]>;
  destroy(): Promise<void>;
};

const running = new Set<Subprocess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export async function createPrivateRedis(): Promise<PrivateRedis> {
  const binary = Bun.which("redis-server");
  if (binary === null) {
    throw new Error("the Redis fault test needs redis-server on PATH (install the redis-server package)");
  }
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: Subprocess | null = null;

  const ping = async (): Promise<boolean> => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on("error", () => {});
    try {
      await client.connect();
      return (await client.ping()) === "PONG";
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  };

  const redis: PrivateRedis = {
    url,
    async start() {
      const started = Bun.spawn(
        [
          binary,
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--save",
          "",
          "--appendonly",
          "no",
          "--daemonize",
          "no",
        ],
        { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
      );
      child = started;
      running.add(started);
      void started.exited.then(() => running.delete(started));
      const deadline = performance.now() + 10_000;
      while (!(await ping())) {
        if (started.exitCode !== null || performance.now() > deadline) {
          const stderr = await new Response(started.stderr).text();
          throw new Error(`redis-server did not start on port ${port}: ${stderr.trim()}`);
        }
        await Bun.sleep(20);
      }
    },
    async kill() {
      const current = child;
      if (current === null) return;
      current.kill("SIGKILL");
      await current.exited;
      child = null;
    },
    async keys(pattern) {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        return await client.keys(pattern);
      } finally {
        client.disconnect();
      }
    },
    async destroy() {
      await redis.kill();
    },
  };
  await redis.start();
  return redis;
}
