import { describeFailure, isConnectionFailure } from "../store/failures.ts";
import type { Log } from "./log.ts";

/**
 * Logs failures nobody awaited, and keeps the process serving. The store handles every statement it
 * sends, so a lost database connection nobody awaited is the driver's own lookup on a new connection
 * (postgres.js asks each one for the array types without awaiting the answer): a connection lost, as the
 * database watch reports, not a defect. Anything else is the defect it looks like.
 */
export function logUnawaitedFailures(log: Log): void {
  const report = (failure: unknown) =>
    log(isConnectionFailure(failure) ? "database_lookup_lost" : "uncaught_error", describeFailure(failure));
  process.on("unhandledRejection", report);
  process.on("uncaughtException", report);
}
