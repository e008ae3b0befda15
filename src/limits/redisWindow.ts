import { Redis, type Result } from "ioredis";
import type { Clock, LimitsLog, SlidingWindowLimiter, WindowDecision } from "./budgets.ts";
import { MemoryWindowLimiter } from "./memoryWindow.ts";
import { SLIDING_WINDOW_SCRIPT } from "./redisScript.ts";

declare module "ioredis" {
  interface RedisCommander<Context> {
    slidingWindowAdmit(
      runs: string,
      counts: string,
      windowMs: number,
      limit: number,
      nowMs: string,
    ): Result<[number, number, number], Context>;
  }
}

/** How long the first requests after boot may wait for the first connection attempt to settle. */
const CONNECT_TIMEOUT_MS = 1_000;
/** A Redis that accepts connections but does not answer costs a request at most this long... */
const COMMAND_TIMEOUT_MS = 500;
/** ...and then is left alone for this long, so a hung Redis does not slow every request down. */
const FAILURE_PAUSE_MS = 1_000;
/** Reconnection backoff cap: an outage is noticed back within this long after Redis returns. */
const MAX_RECONNECT_DELAY_MS = 2_000;

export type RedisWindowOptions = {
  url: string;
  windowMs: number;
  /** Prepended to every key, so deployments (or test runs) sharing a Redis never share budgets. */
  prefix: string;
  /** null: the Redis server's clock, shared by every instance (production). A function: tests. */
  clock: Clock | null;
  log: LimitsLog;
};

/**
 * The sliding-window log shared by every instance through Redis. While Redis cannot be reached each
 * instance counts on its own, in memory: the limits still hold per instance (exactly, with one
 * instance; N instances admit up to N times a limit), `degraded()` says so, and the outage is logged
 * once when it starts and once when it ends. The local log also records what Redis admitted, so an
 * outage starts from this instance's own recent admissions rather than from nothing, and a request
 * Redis admits is refused when the local log is full, so admissions made during an outage, which
 * Redis never saw, still count once it is back (Redis then counts one request that was refused: the
 * error is on the strict side). Requests never wait on a Redis that is down: commands are refused at
 * once while disconnected (no offline queue) and bounded by a short timeout while connected.
 */
export class RedisWindowLimiter implements SlidingWindowLimiter {
  private readonly windowMs: number;
  private readonly client: Redis;
  private readonly prefix: string;
  private readonly clock: Clock | null;
  private readonly log: LimitsLog;
  private state: "starting" | "up" | "down" = "starting";
  private readonly firstAttempt: Promise<void>;
  private pausedUntil = 0;
  private closing = false;
  private readonly local: MemoryWindowLimiter;

  constructor(options: RedisWindowOptions) {
    this.windowMs = options.windowMs;
    this.prefix = options.prefix;
    this.clock = options.clock;
    this.local = new MemoryWindowLimiter(options.windowMs, options.clock ?? Date.now);
    this.log = options.log;
    this.client = new Redis(options.url, {
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    // defineCommand sends EVALSHA and falls back to EVAL once when Redis lost the script (NOSCRIPT).
    this.client.defineCommand("slidingWindowAdmit", { numberOfKeys: 2, lua: SLIDING_WINDOW_SCRIPT });
    this.client.on("ready", () => this.markUp());
    this.client.on("error", (error: Error) => this.markDown(error.message));
    this.client.on("close", () => this.markDown("connection closed"));
    this.firstAttempt = new Promise((resolve) => {
      const settle = () => resolve();
      this.client.once("ready", settle);
      this.client.once("error", settle);
      setTimeout(settle, CONNECT_TIMEOUT_MS).unref();
    });
  }

  async admit(subject: string, limit: number): Promise<WindowDecision> {
    if (this.state === "starting") await this.firstAttempt;
    if (this.client.status !== "ready" || performance.now() < this.pausedUntil) {
      this.markDown(`connection ${this.client.status}`);
      return this.local.admitNow(subject, limit);
    }
    const now = this.clock === null ? "" : String(Math.floor(this.clock()));
    try {
      const [admitted, first, second] = await this.client.slidingWindowAdmit(
        `${this.prefix}{${subject}}:runs`,
        `${this.prefix}{${subject}}:counts`,
        this.windowMs,
        limit,
        now,
      );
      this.markUp();
      if (admitted !== 1) return { kind: "refused", retryAfterMs: first };
      // Admitted only if this instance's own log agrees: it holds what was admitted here while Redis
      // was away, which Redis never saw, so the limit also holds across the end of an outage.
      const local = this.local.admitNow(subject, limit);
      if (local.kind === "refused") return local;
      return { kind: "admitted", remaining: Math.min(first, local.remaining), resetMs: second };
    } catch (error) {
      this.pausedUntil = performance.now() + FAILURE_PAUSE_MS;
      this.markDown(error instanceof Error ? error.message : String(error));
      return this.local.admitNow(subject, limit);
    }
  }

  degraded(): boolean {
    return this.state === "down";
  }

  async close(): Promise<void> {
    this.closing = true;
    this.client.disconnect();
  }

  private markUp(): void {
    if (this.state === "down") this.log("rate_limit_store_recovered", { store: "redis" });
    this.state = "up";
  }

  /** Logs the start of an outage once; the reconnect attempts and failed-open requests that follow are quiet. */
  private markDown(reason: string): void {
    if (this.closing || this.state === "down") return;
    this.state = "down";
    this.log("rate_limit_store_unavailable", { store: "redis", reason, counting: "per instance" });
  }
}
