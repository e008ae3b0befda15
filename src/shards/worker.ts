import { workerData } from "node:worker_threads";
import { claimFault, type WorkerFault } from "./faults.ts";
import type { IndexBuffers } from "./layout.ts";
import { IndexReader } from "./search.ts";

/** What a pool hands its workers once, at thread start: the generation's shared index. */
export type WorkerData = { index: IndexBuffers; faults: Int32Array };

/** A group of captures packed as (latitude, longitude, takenAtMs) triples. */
export type MatchTask = { captures: Float64Array; count: number };

const data = workerData as WorkerData;
const reader = new IndexReader(data.index);

function fail(fault: WorkerFault): void {
  if (fault === "throw") throw new Error("injected worker fault");
  if (fault === "exit") process.exit(70);
  // A hang that only terminating the thread ends, as a stuck native call would.
  for (;;) Atomics.wait(data.faults, 0, Atomics.load(data.faults, 0));
}

/** Returns (event row, venue row) pairs, -1 where nothing matches. */
export default function matchTask(task: MatchTask): Int32Array {
  const fault = claimFault(data.faults);
  if (fault !== null) fail(fault);
  const out = new Int32Array(task.count * 2);
  reader.matchPacked(task.captures, task.count, out);
  return out;
}
