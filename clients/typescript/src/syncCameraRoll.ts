import type { RollcallClient } from "./client.ts";
import type { MediaItem, Rejection, SyncState } from "./types.ts";

/**
 * The partner's reader of a user's camera roll: every asset when `since` is null (a full scan), else
 * the assets added or changed since then. An asset it examines but does not send (one the app leaves
 * out, say) is yielded as null: it still counts in `photos_processed`.
 */
export type CameraRollScan = (
  since: Date | null,
) => AsyncIterable<MediaItem | null> | Iterable<MediaItem | null>;

export type SyncCameraRollOptions = {
  /** Items per batch, 1 to 200 (the service's cap). */
  batchSize?: number;
  /** Batches in flight at once; the specification suggests 3 to start with. */
  concurrency?: number;
  /** How far before `last_sync_at` an incremental scan starts, for assets saved late. */
  lookbackMs?: number;
};

export type SyncCameraRollOutcome = {
  scan: "full" | "incremental";
  /** Where the incremental scan started; null for a full scan. */
  since: Date | null;
  /** Assets the scan examined, sent or not: what sync-complete was told. */
  photosProcessed: number;
  batches: number;
  accepted: number;
  matched: number;
  rejected: Rejection[];
  sync: SyncState;
};

const MAX_BATCH_ITEMS = 200;
const DEFAULTS = { batchSize: MAX_BATCH_ITEMS, concurrency: 3, lookbackMs: 60 * 60 * 1000 };

/**
 * One scan as the specification's incremental-scan guidance (its §4.8) has it: read the stats, scan the
 * whole library while `has_synced` is false, else from shortly before `last_sync_at`; send the items in
 * batches of up to 200, a few in flight; then call sync-complete with an honest `photos_processed`.
 * When a batch fails (after the client's retries) or the scan throws, the error is thrown and
 * sync-complete is not called: the scan did not complete, and the next one starts from the same place.
 *
 * @example
 * const outcome = await syncCameraRoll(rollcall, userId, (since) => library.assets({ modifiedAfter: since }));
 */
export async function syncCameraRoll(
  client: RollcallClient,
  userId: string,
  scan: CameraRollScan,
  options: SyncCameraRollOptions = {},
): Promise<SyncCameraRollOutcome> {
  const { batchSize, concurrency, lookbackMs } = { ...DEFAULTS, ...options };
  if (!(batchSize >= 1 && batchSize <= MAX_BATCH_ITEMS)) throw new RangeError("batchSize is 1 to 200");
  const { has_synced, last_sync_at } = await client.stats(userId, { top: 1 });
  const since = has_synced && last_sync_at !== null ? new Date(Date.parse(last_sync_at) - lookbackMs) : null;
  const tally = { photosProcessed: 0, batches: 0, accepted: 0, matched: 0, rejected: [] as Rejection[] };
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const send = (media: MediaItem[]) => {
    tally.batches += 1;
    const sent: Promise<void> = client
      .sendMedia(userId, media)
      .then((result) => {
        tally.accepted += result.accepted;
        tally.matched += result.matched;
        tally.rejected.push(...result.rejected);
      })
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };
  let batch: MediaItem[] = [];
  try {
    for await (const item of scan(since)) {
      if (failure !== null) break;
      tally.photosProcessed += 1;
      if (item === null) continue;
      batch.push(item);
      if (batch.length < batchSize) continue;
      send(batch);
      batch = [];
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
    if (batch.length > 0 && failure === null) send(batch);
  } finally {
    await Promise.all(inFlight);
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
  const sync = await client.completeSync(userId, tally.photosProcessed);
  return { scan: since === null ? "full" : "incremental", since, ...tally, sync };
}
