import { AsyncLocalStorage } from "node:async_hooks";

/** A statement the driver can still call off: queued, it is dropped; running, PostgreSQL is asked to stop it. */
export type Cancellable = PromiseLike<unknown> & { cancel(): unknown };

/**
 * Calls a statement off where that touches no other statement: not yet sent (the driver drops it) or
 * running (PostgreSQL is asked to stop it). One already sent behind another on its connection is left to
 * run and its answer dropped: postgres.js hands a called-off queued statement's rows to the statement
 * after it, which may be another request's (test/store-request-scope.test.ts). `state` and `active` are
 * the driver's own marks of a statement sent to a connection and of the one the connection is running.
 */
function callOff(statement: Cancellable): void {
  const { state, active } = statement as { state?: unknown; active?: boolean };
  if (state && !active) return;
  void Promise.resolve(statement.cancel()).catch(() => {});
}

/** Why a scope ended early, as its owner and the logs name it. */
export type AbortReason = "deadline" | "client_gone";

/** Thrown into a request's database work once the request has ended early: nothing more is sent for it. */
export class RequestAbortedError extends Error {
  readonly code = "REQUEST_ABORTED";
  constructor(readonly reason: AbortReason) {
    super(`the request ended early (${reason}); its database work was called off`);
  }
}

/**
 * Everything one request holds in the database, so that all of it is let go at once when the request
 * passes its deadline or its client goes away (docs/architecture.md §10): statements in flight are
 * cancelled, connections held for it (a transaction, an export's snapshot) are released, and any
 * statement it tries to send afterwards fails at once. The store finds the current request's scope
 * itself, so no route has to pass it along.
 */
export class RequestScope {
  readonly #startedMs = performance.now();
  #timer: ReturnType<typeof setTimeout>;
  #abortedBy: AbortReason | null = null;
  #ended = false;
  readonly #statements = new Set<Cancellable>();
  readonly #holds = new Set<() => Promise<void>>();
  readonly #abortListeners: ((reason: AbortReason) => void)[] = [];
  readonly #settleListeners: (() => void)[] = [];

  /** The request may hold the database for `deadlineMs` from now, at the most. */
  constructor(deadlineMs: number) {
    this.#timer = setTimeout(() => this.abort("deadline"), deadlineMs);
  }

  /** Moves the deadline to `deadlineMs` after the request began: a streamed answer may run longer. */
  extendDeadline(deadlineMs: number): void {
    if (this.#abortedBy !== null) return;
    clearTimeout(this.#timer);
    const left = Math.max(0, deadlineMs - (performance.now() - this.#startedMs));
    this.#timer = setTimeout(() => this.abort("deadline"), left);
  }

  /** Fails at once when the request has ended early, before anything is sent for it. */
  throwIfAborted(): void {
    if (this.#abortedBy !== null) throw new RequestAbortedError(this.#abortedBy);
  }

  /**
   * Follows a statement until it settles, to cancel it if the request ends first. Settling is watched
   * through the plain promise, which neither starts the statement nor changes how the driver runs it.
   */
  track<S extends Cancellable>(statement: S): S {
    this.throwIfAborted();
    if (this.#ended && this.#holds.size === 0) return statement;
    this.#statements.add(statement);
    const settled = () => this.#statements.delete(statement);
    Promise.prototype.then.call(statement, settled, settled);
    return statement;
  }

  /**
   * Registers what lets go of a connection held for this request; the returned function says it was let
   * go of normally. When the request ends early, `release` runs (once) after its statements are cancelled.
   */
  hold(release: () => Promise<void>): () => void {
    this.throwIfAborted();
    this.#holds.add(release);
    return () => {
      this.#holds.delete(release);
      if (this.#ended && this.#holds.size === 0) this.#settled();
    };
  }

  onAbort(listener: (reason: AbortReason) => void): void {
    this.#abortListeners.push(listener);
  }

  /** Called once nothing is held any more: at `end` with nothing held, or when the last hold is let go. */
  onSettled(listener: () => void): void {
    if (this.#ended && this.#holds.size === 0) listener();
    else this.#settleListeners.push(listener);
  }

  /** The request was answered: what it still holds (a streamed body) stays until let go or aborted. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#holds.size > 0) return;
    this.#statements.clear();
    this.#settled();
  }

  /** Calls off everything the request holds; later statements of it fail at once. */
  abort(reason: AbortReason): void {
    if (this.#abortedBy !== null || (this.#ended && this.#holds.size === 0)) return;
    this.#abortedBy = reason;
    for (const statement of this.#statements) callOff(statement);
    this.#statements.clear();
    const releases = [...this.#holds];
    this.#holds.clear();
    for (const listener of this.#abortListeners) listener(reason);
    void Promise.allSettled(releases.map((release) => release())).then(() => {
      this.#ended = true;
      this.#settled();
    });
  }

  #settled(): void {
    clearTimeout(this.#timer);
    const listeners = this.#settleListeners.splice(0);
    for (const listener of listeners) listener();
  }
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs `work` as the request `scope` serves: every statement it sends is the scope's. */
export function withinScope<T>(scope: RequestScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** The scope of the request being served here, or undefined outside a request (start-up, the catalog poll). */
export function currentScope(): RequestScope | undefined {
  return scopes.getStore();
}

/** Runs shared work (a statement that serves several requests) outside whichever request started it. */
export function outsideRequests<T>(work: () => T): T {
  return scopes.exit(work);
}

/** Sends a statement as the current request's, if any: refused once the request has ended early. */
export function sentForRequest<S extends Cancellable>(send: () => S): S {
  const scope = scopes.getStore();
  if (scope === undefined) return send();
  scope.throwIfAborted();
  return scope.track(send());
}

/**
 * Waits for a connection as the current request: when the request ends first, the wait is given up
 * and the connection, whenever it comes, goes straight back to its pool.
 */
export async function reservedForRequest<C extends { release(): void }>(
  reserve: () => Promise<C>,
): Promise<C> {
  const scope = scopes.getStore();
  if (scope === undefined) return reserve();
  scope.throwIfAborted();
  const pending = reserve();
  const aborted = new Promise<never>((_, reject) =>
    scope.onAbort((reason) => reject(new RequestAbortedError(reason))),
  );
  try {
    return await Promise.race([pending, aborted]);
  } catch (error) {
    void pending.then(
      (connection) => connection.release(),
      () => {},
    );
    throw error;
  }
}
