/**
 * Fault injection for drills and tests: the next N match tasks, on whichever workers pick them up,
 * throw, exit their thread, or hang. The request lives in a small SharedArrayBuffer every worker of a
 * generation maps, so it reaches a busy worker without a message.
 *
 * Layout (Int32): [0] fault kind, [1] tasks still to fault. Workers claim a fault with compareExchange
 * on [1], so exactly N tasks fault however many workers race for them.
 */
export type WorkerFault = "throw" | "exit" | "hang";

const KINDS: readonly WorkerFault[] = ["throw", "exit", "hang"];
const KIND = 0;
const REMAINING = 1;

export function faultControl(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
}

export function requestFault(control: Int32Array, fault: WorkerFault, tasks: number): void {
  Atomics.store(control, KIND, KINDS.indexOf(fault));
  // Stored last: a worker that sees a count also sees the kind written before it.
  Atomics.store(control, REMAINING, tasks);
}

export function claimFault(control: Int32Array): WorkerFault | null {
  let remaining = Atomics.load(control, REMAINING);
  while (remaining > 0) {
    const seen = Atomics.compareExchange(control, REMAINING, remaining, remaining - 1);
    if (seen === remaining) return KINDS[Atomics.load(control, KIND)] ?? null;
    remaining = seen;
  }
  return null;
}

/**
 * A batch the engine could not match: a worker failed on it twice (threw, exited, or outlived the task
 * timeout). The API answers it with 500 internal_error; the engine has already replaced the worker.
 */
export class MatchEngineError extends Error {
  override readonly name = "MatchEngineError";
}
