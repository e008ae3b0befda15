export { createRollcallClient, RollcallClient, type RollcallClientOptions } from "./client.ts";
export { type ErrorDetails, RollcallError } from "./errors.ts";
export { DEFAULT_RETRY_POLICY, type RetryEvent, type RetryPolicy } from "./retry.ts";
export type { components, operations, paths } from "./schema.ts";
export {
  type CameraRollScan,
  type SyncCameraRollOptions,
  type SyncCameraRollOutcome,
  syncCameraRoll,
} from "./syncCameraRoll.ts";
export type * from "./types.ts";
