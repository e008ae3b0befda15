import type { MessagePort } from "node:worker_threads";
import type { SlidingWindowLimiter, WindowDecision } from "./budgets.ts";

/**
 * The in-memory store shared by request threads. Budgets must stay exact across threads (the N+1th
 * request is refused whichever thread takes it), and an exact sliding-window log is a growing,
 * per-subject structure that does not fit a fixed shared-memory layout without a lock around every
 * admission. So one limiter, on the thread that supervises the others, decides for all of them; each
 * request thread asks it over a MessagePort. The cost is one message each way per admission (tens of
 * microseconds), paid only when rate limiting is on and the store is `memory`; a Redis store is shared
 * already and each thread talks to it directly.
 */

type Ask = { id: number; subject: string; limit: number };
type Answer = { id: number; decision: WindowDecision } | { id: number; error: string };

/** Answers every request thread's admissions from `limiter`, on the supervising thread. */
export function hostWindow(limiter: SlidingWindowLimiter, port: MessagePort): void {
  port.on("message", (ask: Ask) => {
    limiter.admit(ask.subject, ask.limit).then(
      (decision) => port.postMessage({ id: ask.id, decision } satisfies Answer),
      (error: unknown) => port.postMessage({ id: ask.id, error: String(error) } satisfies Answer),
    );
  });
}

/** A request thread's view of the supervising thread's limiter. */
export class ThreadWindowLimiter implements SlidingWindowLimiter {
  private next = 0;
  private readonly pending = new Map<number, { resolve(d: WindowDecision): void; reject(e: Error): void }>();

  constructor(private readonly port: MessagePort) {
    port.on("message", (answer: Answer) => {
      const waiting = this.pending.get(answer.id);
      if (waiting === undefined) return;
      this.pending.delete(answer.id);
      if ("decision" in answer) waiting.resolve(answer.decision);
      else waiting.reject(new Error(`the shared rate limiter failed: ${answer.error}`));
    });
  }

  admit(subject: string, limit: number): Promise<WindowDecision> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ id, subject, limit } satisfies Ask);
    });
  }

  degraded(): boolean {
    return false;
  }

  async close(): Promise<void> {
    this.port.close();
    for (const waiting of this.pending.values()) waiting.reject(new Error("the rate limiter closed"));
    this.pending.clear();
  }
}
