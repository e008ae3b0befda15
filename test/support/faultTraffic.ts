import { batchItems } from "./faultFixture.ts";
import { type Call, call, isEnvelope, type Outcome, type ServiceProcess } from "./serviceProcess.ts";

/** The runtime closes a connection idle this long without an answer; the service answers before. */
const SLOWEST_ANSWER_MS = 10_000;

export type BatchRecord = { userId: string; batchKey: string; ids: string[]; outcome: Outcome };
export type ReadRecord = { path: string; outcome: Outcome };

/** Every outcome the client loops of one scenario saw. */
export class Traffic {
  readonly batches: BatchRecord[] = [];
  readonly reads: ReadRecord[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly baseUrl: () => string,
    private readonly key: string,
    /** No request waits longer than this: past the service's own 8 s deadline and the runtime's 10 s. */
    private readonly requestTimeoutMs = 15_000,
  ) {}

  get acknowledged(): BatchRecord[] {
    return this.batches.filter((b) => b.outcome.kind === "answer" && b.outcome.status === 200);
  }

  /** Clients each sending batches of new items for their own user, one after another. */
  ingest(users: readonly string[], tag: string): void {
    users.forEach((userId, client) => {
      this.loops.push(
        this.loop(async (n) => {
          const batchKey = `${tag}-c${client}-b${n}`;
          const media = batchItems(batchKey);
          const outcome = await this.send({
            method: "POST",
            path: `/v1/users/${userId}/media`,
            body: { media },
          });
          this.batches.push({ userId, batchKey, ids: media.map((m) => m.id), outcome });
          return outcome;
        }),
      );
    });
  }

  /** Clients each reading a user's history and stats in turn. */
  read(users: readonly string[]): void {
    users.forEach((userId, client) => {
      this.loops.push(
        this.loop(async (n) => {
          const path = (n + client) % 2 === 0 ? `/v1/users/${userId}/events` : `/v1/users/${userId}/stats`;
          const outcome = await this.send({ method: "GET", path });
          this.reads.push({ path, outcome });
          return outcome;
        }),
      );
    });
  }

  /** Resolves once the loops have seen `count` answers of 200 between them, or after `timeoutMs`. */
  async untilSucceeded(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const ok = () =>
      [...this.batches, ...this.reads].filter((r) => r.outcome.kind === "answer" && r.outcome.status === 200)
        .length;
    const start = ok();
    while (ok() - start < count) {
      if (performance.now() > deadline) {
        throw new Error(`the clients saw ${ok() - start} successes in ${timeoutMs} ms, expected ${count}`);
      }
      await Bun.sleep(10);
    }
  }

  /** Stops the loops and waits for their last requests (each bounded by the request timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /**
   * Every outcome that was not a 200, nor a 500 or 503 in the error envelope, or that took longer than
   * the runtime's 10 s idle timeout (the service answers within 8 s: docs/architecture.md, "When the
   * database stops answering"), described.
   */
  unexpected(): string[] {
    return this.described((outcome) => {
      if (outcome.kind !== "answer" || outcome.ms > SLOWEST_ANSWER_MS) return true;
      if (outcome.status === 200) return false;
      return !((outcome.status === 500 || outcome.status === 503) && isEnvelope(outcome.body));
    });
  }

  /** Requests sent at or after `since` (a performance.now() instant) that were not answered 200. */
  failedSince(since: number): string[] {
    return this.described(
      (outcome) => outcome.at >= since && (outcome.kind !== "answer" || outcome.status !== 200),
    );
  }

  private described(selected: (outcome: Outcome) => boolean): string[] {
    const all = [
      ...this.batches.map((b) => ({ what: `POST media ${b.batchKey}`, outcome: b.outcome })),
      ...this.reads.map((r) => ({ what: `GET ${r.path}`, outcome: r.outcome })),
    ];
    return all
      .filter(({ outcome }) => selected(outcome))
      .map(({ what, outcome }) => `${what}: ${describeOutcome(outcome)}`);
  }

  private send(request: Omit<Call, "key">): Promise<Outcome> {
    return call(this.baseUrl(), { ...request, key: this.key }, this.requestTimeoutMs);
  }

  private async loop(step: (n: number) => Promise<Outcome>): Promise<void> {
    // Bounded however long a test runs; a client that fails backs off a little, as a partner would.
    for (let n = 0; n < 100_000 && !this.stopped; n++) {
      const outcome = await step(n);
      if (outcome.kind !== "answer" || outcome.status !== 200) await Bun.sleep(50);
    }
  }
}

export function describeOutcome(outcome: Outcome): string {
  const ms = Math.round(outcome.ms);
  if (outcome.kind === "dropped") return `no answer, connection ended (${outcome.error}) after ${ms} ms`;
  if (outcome.kind === "timeout") return `no answer within ${ms} ms`;
  const body = JSON.stringify(outcome.body) ?? "";
  return `${outcome.status} ${body.length > 200 ? `${body.slice(0, 200)}…` : body} after ${ms} ms`;
}

/** Creates `count` users through the API and returns their ids. */
export async function createUsers(service: ServiceProcess, key: string, prefix: string, count: number) {
  const users: string[] = [];
  for (let i = 0; i < count; i++) {
    const outcome = await call(service.baseUrl, {
      method: "POST",
      path: "/v1/users",
      key,
      body: { email: `${prefix}${i}@example.com` },
    });
    const body = outcome.kind === "answer" ? (outcome.body as { user_id?: unknown }) : null;
    if (outcome.kind !== "answer" || outcome.status > 201 || typeof body?.user_id !== "string") {
      throw new Error(`user creation failed: ${describeOutcome(outcome)}`);
    }
    users.push(body.user_id);
  }
  return users;
}
