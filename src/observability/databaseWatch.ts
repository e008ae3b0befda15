import type { Log } from "./log.ts";

/** How often the database is asked whether it answers, and how long an answer may take. */
const CHECK_EVERY_MS = 1000;
const ANSWER_WITHIN_MS = 2000;

/**
 * Knows whether PostgreSQL answers, from a trivial statement every second, for readiness and the
 * `rollcall_db_up` metric. A change is logged once when it happens (`database_unavailable`, then
 * `database_recovered` with how long it lasted) instead of once per request that failed meanwhile.
 * Requests never wait on it: each one still tries the database, so service resumes with the first
 * connection that succeeds, not at the next check.
 */
export class DatabaseWatch {
  #up = true;
  #downSinceMs = 0;
  #checking = false;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly ping: (timeoutMs: number) => Promise<boolean>,
    private readonly log: Log,
    /** Told of every change (request threads read the state from shared memory). */
    private readonly onChange: (up: boolean) => void = () => {},
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  up(): boolean {
    return this.#up;
  }

  /** Asks the database once (a check already under way answers for this one too). */
  async check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const answered = await this.ping(ANSWER_WITHIN_MS);
      if (answered && !this.#up) {
        this.log("database_recovered", { downSeconds: (Date.now() - this.#downSinceMs) / 1000 });
      } else if (!answered && this.#up) {
        this.#downSinceMs = Date.now();
        this.log("database_unavailable", { checkTimeoutMs: ANSWER_WITHIN_MS });
      }
      if (answered !== this.#up) this.onChange(answered);
      this.#up = answered;
    } finally {
      this.#checking = false;
    }
  }
}
