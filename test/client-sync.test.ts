/**
 * `syncCameraRoll` of the TypeScript client against a real rollcall: the specification's incremental-scan
 * guidance (§4.8), batches of up to 200 with a few in flight, and an honest photos_processed.
 */
import { describe, expect, test } from "bun:test";
import {
  createRollcallClient,
  type MediaItem,
  RollcallError,
  syncCameraRoll,
} from "../clients/typescript/src/index.ts";
import { DURING_100, mediaTestFile, NOWHERE, photo } from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

/** A client recording the batches it sends, the most in flight at once, and the sync-complete bodies. */
function recordingClient() {
  const record = { batchSizes: [] as number[], mostInFlight: 0, syncBodies: [] as string[] };
  let inFlight = 0;
  const client = createRollcallClient({
    baseUrl: `${fixture.server.baseUrl}/v1`,
    apiKey: fixture.key,
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      if (path.endsWith("/sync-complete")) record.syncBodies.push(await request.clone().text());
      if (!path.endsWith("/media")) return fetch(request);
      record.batchSizes.push(((await request.clone().json()) as { media: unknown[] }).media.length);
      inFlight += 1;
      record.mostInFlight = Math.max(record.mostInFlight, inFlight);
      try {
        return await fetch(request);
      } finally {
        inFlight -= 1;
      }
    },
  });
  return { client, record };
}

/** A camera roll of `matching` photos at event 100, `elsewhere` far from any venue, and `skipped` not sent. */
function cameraRoll(matching: number, elsewhere: number, skipped: number): (MediaItem | null)[] {
  return [
    ...Array.from({ length: matching }, (_, i) => photo(`at-100-${i}`, DURING_100)),
    ...Array.from({ length: elsewhere }, (_, i) => photo(`elsewhere-${i}`, DURING_100, NOWHERE)),
    ...Array.from({ length: skipped }, () => null),
  ];
}

describe("syncCameraRoll", () => {
  test("scans in full until has_synced, then from shortly before last_sync_at", async () => {
    const { client, record } = recordingClient();
    const userId = await fixture.newUser();
    const asked: (Date | null)[] = [];
    const full = await syncCameraRoll(client, userId, (since) => {
      asked.push(since);
      return cameraRoll(300, 149, 1);
    });
    expect(full).toMatchObject({
      scan: "full",
      since: null,
      photosProcessed: 450,
      batches: 3,
      accepted: 449,
      matched: 300,
      rejected: [],
    });
    expect(full.sync.has_synced).toBe(true);
    expect(record.batchSizes.toSorted((a, b) => a - b)).toEqual([49, 200, 200]);
    expect(record.mostInFlight).toBe(3);
    // Every asset examined is counted, the one not sent included.
    expect(record.syncBodies).toEqual(['{"photos_processed":450}']);

    const lookbackMs = 10 * 60 * 1000;
    const incremental = await syncCameraRoll(
      client,
      userId,
      async function* (since) {
        asked.push(since);
        yield photo("new-one", DURING_100);
      },
      { lookbackMs },
    );
    expect(asked[1]?.getTime()).toBe(Date.parse(full.sync.last_sync_at) - lookbackMs);
    expect(incremental).toMatchObject({ scan: "incremental", photosProcessed: 1, batches: 1, matched: 1 });
    expect((await client.stats(userId)).media_count).toBe(301);
  });

  test("keeps to its batch size and to the batches it may have in flight", async () => {
    const { client, record } = recordingClient();
    const userId = await fixture.newUser();
    const outcome = await syncCameraRoll(client, userId, () => cameraRoll(0, 250, 0), {
      batchSize: 50,
      concurrency: 2,
    });
    expect([outcome.batches, outcome.accepted, outcome.matched]).toEqual([5, 250, 0]);
    expect(record.batchSizes).toEqual([50, 50, 50, 50, 50]);
    expect(record.mostInFlight).toBe(2);
    // Nothing matched, but the scan examined 250 assets: the user has synced (docs/api.md §6).
    expect(outcome.sync.has_synced).toBe(true);
  });

  test("a scan that fails midway, or a batch the service refuses, is not reported complete", async () => {
    const { client, record } = recordingClient();
    const userId = await fixture.newUser();
    const broken = syncCameraRoll(client, userId, async function* () {
      yield* cameraRoll(250, 0, 0);
      throw new Error("the photo library went away");
    });
    await expect(broken).rejects.toThrow("the photo library went away");
    const refused = await syncCameraRoll(client, userId, () => [
      photo("fine", DURING_100),
      { ...photo("odd", DURING_100), media_type: "gif" } as unknown as MediaItem,
    ]).catch((error: unknown) => error);
    expect((refused as RollcallError).code).toBe("invalid_media_item");
    expect(refused).toBeInstanceOf(RollcallError);
    expect(record.syncBodies).toEqual([]);
    expect((await client.stats(userId)).has_synced).toBe(false);
  });
});
