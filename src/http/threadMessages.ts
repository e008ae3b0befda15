import type { MetricsJson } from "../observability/metrics.ts";
import type { SharedGeneration } from "../shards/threadIndex.ts";

/**
 * What the supervising thread and the request threads say to each other, and the layout of the Int32
 * control block they share. The control block carries what every request must read without waiting
 * for a message: which index generation serves (written by the supervisor with Atomics.store after
 * every thread holds it, read with Atomics.load once per batch) and the readiness flags.
 */
export { CURRENT_GENERATION } from "../shards/threadIndex.ts";
/** 1 while the supervisor's database watch sees PostgreSQL answer. */
export const DATABASE_UP = 1;
/** 1 once shutdown began: /readyz answers 503 while requests are still served. */
export const DRAINING = 2;
/** 1 while the index being served holds no event: every batch would be dropped unmatched. */
export const CATALOG_EMPTY = 3;
export const CONTROL_WORDS = 4;

export type SupervisorMessage =
  | { type: "generation"; generation: SharedGeneration }
  | { type: "metrics"; id: number }
  | { type: "drain" };

export type ThreadMessage =
  | { type: "listening"; port: number }
  | { type: "held"; number: number }
  | { type: "metrics"; id: number; snapshot: MetricsJson }
  | { type: "stopped" };
