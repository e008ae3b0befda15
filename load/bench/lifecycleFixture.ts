import { readFileSync, writeFileSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { Random } from "../../src/store/catalog/generate/random.ts";
import type { Store } from "../../src/store/db.ts";
import { type KeptMedia, writeBatch } from "../../src/store/ingest.ts";
import { createUser } from "../../src/store/users.ts";
import type { CatalogSample } from "../traffic/sample.ts";
import { keptBatches } from "./writeFixture.ts";

/** The partner of the lifecycle bench's users. */
export const BENCH_PARTNER = "lifecycle";

/** A media item as a partner sends it, from a kept row the write fixture made (a real match). */
export function wireItem(item: KeptMedia, id: string) {
  return {
    id,
    taken_at: item.takenAt,
    latitude: item.latitude,
    longitude: item.longitude,
    media_type: item.mediaType,
    filename: item.filename,
    duration_seconds: item.durationSeconds,
    thumbnail_url: item.thumbnailUrl,
    device_make: item.deviceMake,
    device_model: item.deviceModel,
  };
}

/** `count` batches of 200 items that match licensed events, with ids no seeded item has (`prefix`). */
export function freshBatches(sample: CatalogSample, seed: number, count: number, prefix: string) {
  const batches = keptBatches(new Random(seed), sample, loadConfig().match, [prefix], {
    batches: count,
    rows: 200,
  });
  return batches.map((batch, b) => batch.kept.map((item, i) => wireItem(item, `${prefix}-${b}-${i}`)));
}

/**
 * A user keeping `items` matched items, written through the batch write the API commits with, 200 at a
 * time, so every derived table is as the API would have left it.
 */
export async function seededUser(store: Store, sample: CatalogSample, name: string, items: number) {
  const { id } = await createUser(store, BENCH_PARTNER, {
    email: `${name}@lifecycle.example`,
    partnerUserId: null,
    firstName: null,
    lastName: null,
    phoneNumber: null,
    address: null,
  });
  const batches = keptBatches(new Random(items), sample, loadConfig().match, [id], {
    batches: Math.ceil(items / 200),
    rows: 200,
  });
  for (const batch of batches) {
    const kept = batch.kept.map((item) => ({ ...item, mediaId: `${name}-${item.mediaId}` }));
    await writeBatch(store, {
      userId: id,
      partnerId: BENCH_PARTNER,
      acceptedIds: kept.map((m) => m.mediaId),
      kept,
    });
  }
  return id;
}

/** The server process's resident memory now and at its peak, in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: field("VmRSS"), peak: field("VmHWM") };
}

/** Starts a new peak: the kernel sets VmHWM back to the current RSS (proc(5), clear_refs 5). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Percentiles of `samples` (milliseconds), rounded to a tenth. */
export function summary(samples: readonly number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), max: at(1) };
}
