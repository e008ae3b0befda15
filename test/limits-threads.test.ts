/** Budgets counted in memory stay exact across request threads (docs/operations.md §5). */
import { describe, expect, test } from "bun:test";
import { MessageChannel } from "node:worker_threads";
import { hostWindow, ThreadWindowLimiter } from "../src/limits/index.ts";
import { MemoryWindowLimiter } from "../src/limits/memoryWindow.ts";

function threadsOver(host: MemoryWindowLimiter, count: number): ThreadWindowLimiter[] {
  return Array.from({ length: count }, () => {
    const { port1, port2 } = new MessageChannel();
    hostWindow(host, port1);
    return new ThreadWindowLimiter(port2);
  });
}

describe("a memory store shared by request threads", () => {
  test("the limit holds over every thread together: the N+1th request is refused whichever asks", async () => {
    let now = 1_000_000;
    const host = new MemoryWindowLimiter(60_000, () => now);
    const threads = threadsOver(host, 3);
    const decisions = await Promise.all(
      Array.from({ length: 30 }, (_, i) => threads[i % 3]?.admit("key-1:read", 10)),
    );
    expect(decisions.filter((d) => d?.kind === "admitted")).toHaveLength(10);
    expect(decisions.filter((d) => d?.kind === "refused")).toHaveLength(20);
    now += 60_000;
    expect((await threads[2]?.admit("key-1:read", 10))?.kind).toBe("admitted");
    for (const thread of threads) await thread.close();
  });

  test("subjects are counted apart, and a closed thread's pending admissions fail instead of hanging", async () => {
    const host = new MemoryWindowLimiter(60_000, () => 5_000);
    const [first, second] = threadsOver(host, 2);
    expect((await first?.admit("a", 1))?.kind).toBe("admitted");
    expect((await second?.admit("b", 1))?.kind).toBe("admitted");
    expect((await second?.admit("a", 1))?.kind).toBe("refused");
    const pending = first?.admit("c", 1);
    await first?.close();
    await expect(pending ?? Promise.resolve()).rejects.toThrow("closed");
    await second?.close();
  });
});
