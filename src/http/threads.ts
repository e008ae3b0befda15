import { MessageChannel, Worker } from "node:worker_threads";
import type { Config } from "../config.ts";
import type { SlidingWindowLimiter } from "../limits/budgets.ts";
import { hostWindow } from "../limits/index.ts";
import type { Log } from "../observability/log.ts";
import type { MetricsJson } from "../observability/metrics.ts";
import type { MatchingEngine } from "../shards/engine.ts";
import type { SharedGeneration } from "../shards/threadIndex.ts";
import { describeFailure } from "../store/failures.ts";
import type { ThreadInit } from "./requestThread.ts";
import {
  CATALOG_EMPTY,
  CONTROL_WORDS,
  CURRENT_GENERATION,
  DATABASE_UP,
  DRAINING,
  type SupervisorMessage,
  type ThreadMessage,
} from "./threadMessages.ts";

/** How long a thread may take to hold a new generation, answer for its metrics, or drain. */
const ACK_TIMEOUT_MS = 5_000;
const METRICS_TIMEOUT_MS = 2_000;
const DRAIN_TIMEOUT_MS = 12_000;
/**
 * Connections of the main pool the supervising thread keeps for the catalog poll, the catalog load
 * and the database watch; the request threads share the rest. Its read pool is never used, and
 * postgres.js opens connections only when a statement needs one.
 */
export const SUPERVISOR_CONNECTIONS = 2;

/** How long a thread may take to load the app, open its pools and listen. */
const START_TIMEOUT_MS = 30_000;
/** A thread that died is replaced after this pause, so a thread dying at start does not spin. */
const RESPAWN_DELAY_MS = 200;

export type RequestThreads = {
  /** The port every thread listens on (the one PORT names, or the one the first thread was given). */
  port: number;
  /** Marks the process as draining: /readyz answers 503 on every thread while they keep serving. */
  markDraining(): void;
  /** Tells the database watch's state to every thread's /readyz. */
  setDatabaseUp(up: boolean): void;
  /** Every thread finishes its in-flight requests, closes, and ends. */
  stop(): Promise<void>;
  /** The threads' metrics registries, to be summed into the exposition. */
  metrics(): Promise<MetricsJson[]>;
  /** Fault tests: ends one thread abruptly, as a crash would; it is replaced like any thread that dies. */
  endOne(): void;
};

type Slot = { worker: Worker; thread: number; listening: boolean; onMessage(message: ThreadMessage): void };

/** `total` spread over `count` threads, at least one each: thread i (from 0) gets its share. */
export function shareOf(total: number, count: number, i: number): number {
  return Math.max(1, Math.floor(total / count) + (i < total % count ? 1 : 0));
}

/**
 * Starts `config.requestThreads` request threads over the engine's index and supervises them: a
 * thread that dies is replaced, every new index generation reaches all of them before it serves, and
 * `stop` drains them all. The main thread keeps the catalog poll, the index builds, the in-memory rate
 * limiter and the metrics listener (docs/architecture.md §8).
 */
export async function startRequestThreads(deps: {
  config: Config;
  cursorSecret: string;
  engine: MatchingEngine;
  memoryLimiter: SlidingWindowLimiter | null;
  log: Log;
}): Promise<RequestThreads> {
  const { config, engine, log } = deps;
  const count = config.requestThreads;
  const control = new Int32Array(new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT));
  let current: SharedGeneration = engine.sharedGeneration();
  let pending: SharedGeneration | null = null;
  Atomics.store(control, CURRENT_GENERATION, current.number);
  Atomics.store(control, DATABASE_UP, 1);
  Atomics.store(control, CATALOG_EMPTY, current.events === 0 ? 1 : 0);
  const slots: (Slot | null)[] = new Array(count).fill(null);
  let stopping = false;
  let port = config.port;
  let nextRequest = 0;
  const waiting = new Map<string, (message: ThreadMessage) => void>();

  const post = (slot: Slot, message: SupervisorMessage) => slot.worker.postMessage(message);

  /** Resolves with a thread's answer of `type` (keyed by `key`), or null after `timeoutMs`. */
  function answer(thread: number, key: string, timeoutMs: number): Promise<ThreadMessage | null> {
    return new Promise((resolve) => {
      const id = `${thread}:${key}`;
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(null);
      }, timeoutMs);
      waiting.set(id, (message) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(message);
      });
    });
  }

  function keyOf(message: ThreadMessage): string {
    switch (message.type) {
      case "held":
        return `held:${message.number}`;
      case "metrics":
        return `metrics:${message.id}`;
      default:
        return message.type;
    }
  }

  async function spawn(i: number): Promise<void> {
    const channel = deps.memoryLimiter === null ? null : new MessageChannel();
    if (channel !== null && deps.memoryLimiter !== null) hostWindow(deps.memoryLimiter, channel.port1);
    const init: ThreadInit = {
      config: { ...config, port },
      cursorSecret: deps.cursorSecret,
      thread: i + 1,
      poolSize: shareOf(config.databasePoolSize - SUPERVISOR_CONNECTIONS, count, i),
      readPoolSize: shareOf(config.databaseReadPoolSize, count, i),
      exportPoolSize: shareOf(config.exportsPerInstance, count, i),
      cacheMb: Math.floor(config.eventCacheMb / count),
      control: control.buffer as SharedArrayBuffer,
      generations: pending === null ? [current] : [current, pending],
      limiterPort: channel?.port2 ?? null,
    };
    const worker = new Worker(new URL("./requestThread.ts", import.meta.url), {
      workerData: init,
      transferList: channel === null ? [] : [channel.port2],
    });
    const slot: Slot = {
      worker,
      thread: i + 1,
      listening: false,
      onMessage: (message) => waiting.get(`${slot.thread}:${keyOf(message)}`)?.(message),
    };
    slots[i] = slot;
    worker.on("message", slot.onMessage);
    worker.on("error", (error) =>
      log("request_thread_failed", { thread: slot.thread, ...describeFailure(error) }),
    );
    const exited = new Promise<number>((resolve) => worker.once("exit", resolve));
    void exited.then((code) => {
      channel?.port1.close();
      if (slots[i] === slot) slots[i] = null;
      // A thread that never listened failed to start: that is the caller's error, not a crash to repair.
      if (stopping || !slot.listening) return;
      log("request_thread_replaced", { thread: slot.thread, exitCode: code });
      setTimeout(() => {
        spawn(i).catch((error: unknown) =>
          log("request_thread_failed", { thread: slot.thread, ...describeFailure(error) }),
        );
      }, RESPAWN_DELAY_MS);
    });
    const started = answer(slot.thread, "listening", START_TIMEOUT_MS);
    const outcome = await Promise.race([started, exited.then((code) => ({ type: "exited" as const, code }))]);
    if (outcome?.type !== "listening") {
      await worker.terminate();
      throw new Error(
        `request thread ${slot.thread} did not start listening on ${config.host}:${port}` +
          (outcome?.type === "exited" ? ` (it exited with code ${outcome.code}; see its log lines)` : ""),
      );
    }
    slot.listening = true;
    port = outcome.port;
  }

  // The first thread binds the port (PORT=0 picks one); the others join it.
  await spawn(0);
  await Promise.all(Array.from({ length: count - 1 }, (_, i) => spawn(i + 1)));

  engine.beforeSwap(async (next) => {
    pending = next;
    const live = slots.filter((slot): slot is Slot => slot !== null);
    for (const slot of live) post(slot, { type: "generation", generation: next });
    await Promise.all(live.map((slot) => answer(slot.thread, `held:${next.number}`, ACK_TIMEOUT_MS)));
    // Every live thread holds it (a thread that did not answer has died and is replaced holding both).
    Atomics.store(control, CURRENT_GENERATION, next.number);
    Atomics.store(control, CATALOG_EMPTY, next.events === 0 ? 1 : 0);
    current = next;
    pending = null;
  });

  return {
    port,
    markDraining: () => Atomics.store(control, DRAINING, 1),
    setDatabaseUp: (up) => Atomics.store(control, DATABASE_UP, up ? 1 : 0),
    async stop() {
      stopping = true;
      const live = slots.filter((slot): slot is Slot => slot !== null);
      for (const slot of live) post(slot, { type: "drain" });
      await Promise.all(live.map((slot) => answer(slot.thread, "stopped", DRAIN_TIMEOUT_MS)));
      await Promise.all(live.map((slot) => slot.worker.terminate()));
    },
    async metrics() {
      const live = slots.filter((slot): slot is Slot => slot !== null);
      const id = nextRequest++;
      for (const slot of live) post(slot, { type: "metrics", id });
      const answers = await Promise.all(
        live.map((slot) => answer(slot.thread, `metrics:${id}`, METRICS_TIMEOUT_MS)),
      );
      return answers.flatMap((message) => (message?.type === "metrics" ? [message.snapshot] : []));
    },
    endOne() {
      void slots.find((slot) => slot !== null)?.worker.terminate();
    },
  };
}
