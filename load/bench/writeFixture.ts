import type { MatchSettings } from "../../src/shards/matcher.ts";
import { generateCatalog } from "../../src/store/catalog/generate/index.ts";
import type { Random } from "../../src/store/catalog/generate/random.ts";
import { importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import type { Store } from "../../src/store/db.ts";
import type { KeptMedia } from "../../src/store/ingest.ts";
import {
  burstSize,
  placeAtVenue,
  roundCoordinate,
  timeAtEvent,
  VIDEO_SHARE_AT_EVENTS,
} from "../traffic/attendance.ts";
import type { CatalogSample } from "../traffic/sample.ts";

/** One batch's kept rows for one user, as the media API hands them to the store. */
export type WriteBatch = { userId: string; kept: KeptMedia[] };

/** A generated catalog imported with the service's own generator and importer (no CLI round trip). */
export async function importGeneratedCatalog(store: Store, events: number, seed: number): Promise<void> {
  const report = await importCatalog(store, memoryLines(generateCatalog({ events, seed })));
  if (!report.ok) throw new Error(`the generated catalog did not import: ${JSON.stringify(report.errors)}`);
}

/**
 * `batches` batches of `rows` kept items each, round robin over the users (so concurrent batches are for
 * different users), every item at a real licensed event, inside its window and radius.
 */
export function keptBatches(
  random: Random,
  sample: CatalogSample,
  settings: MatchSettings,
  userIds: readonly string[],
  options: { batches: number; rows: number },
): WriteBatch[] {
  const licensed = sample.events.filter((event) => event.licensed);
  const venues = new Map(sample.venues.map((venue) => [venue.id, venue]));
  const sequence = new Map<string, number>();
  const batches: WriteBatch[] = [];
  for (let b = 0; b < options.batches; b++) {
    const userId = userIds[b % userIds.length] as string;
    const kept: KeptMedia[] = [];
    while (kept.length < options.rows) {
      const event = random.pick(licensed);
      const venue = venues.get(event.venueId);
      if (!venue) continue;
      for (let i = Math.min(burstSize(random), options.rows - kept.length); i > 0; i--) {
        const n = sequence.get(userId) ?? 0;
        sequence.set(userId, n + 1);
        const place = placeAtVenue(random, venue, settings);
        const video = random.chance(VIDEO_SHARE_AT_EVENTS);
        kept.push({
          mediaId: `${n.toString(16).padStart(8, "0").toUpperCase()}-BENCH-4000-8000/L0/001`,
          eventId: event.id,
          venueId: venue.id,
          takenAt: new Date(timeAtEvent(random, event, settings)).toISOString(),
          latitude: roundCoordinate(place.latitude),
          longitude: roundCoordinate(place.longitude),
          mediaType: video ? "video" : "photo",
          filename: `IMG_${n % 10_000}.${video ? "MOV" : "HEIC"}`,
          durationSeconds: video ? random.int(3, 180) : null,
          thumbnailUrl: random.chance(0.5) ? `https://cdn.partner.example/thumbs/${n}.jpg` : null,
          deviceMake: "Apple",
          deviceModel: "iPhone 15 Pro",
          deviceLensModel: null,
        });
      }
    }
    batches.push({ userId, kept });
  }
  return batches;
}
