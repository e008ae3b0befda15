import type { MatchSettings } from "../../src/shards/matcher.ts";
import { Random } from "../../src/store/catalog/generate/random.ts";
import { type CameraRoll, type MediaItem, planCameraRoll } from "./cameraRoll.ts";
import type { CatalogSample } from "./sample.ts";

/** A user as the partner creates it (POST /v1/users body). */
export type TrafficUser = { email: string; partner_user_id: string; first_name: string };

/** One pre-serialised media batch for `user` (an index into TrafficPlan.users). */
export type Batch = { user: number; items: number; body: Buffer };

export type TrafficPlan = { users: TrafficUser[]; batches: Batch[] };

export type TrafficOptions = {
  seed: number;
  users: number;
  /** How many batches to pre-generate; a run that sends more rotates through them again (a re-sync). */
  batches: number;
  /** Items per batch, both included: the spec recommends 50 to 200. */
  batchSize: { min: number; max: number };
  /** Share of batches sent a second time a little later, as a client retrying after a lost response does. */
  resendRate: number;
};

export const DEFAULT_TRAFFIC: Omit<TrafficOptions, "seed" | "users" | "batches"> = {
  batchSize: { min: 50, max: 200 },
  resendRate: 0.03,
};

function takeBatch(roll: CameraRoll, size: number): MediaItem[] | null {
  const items: MediaItem[] = [];
  while (items.length < size) {
    const item = roll.next();
    if (item === null) return null;
    items.push(item);
  }
  return items;
}

/**
 * Generates every request body up front, deterministically from the seed, so the load generator spends
 * no CPU per request beyond picking one. Users take turns (round robin) so that concurrent requests
 * mostly go to different users, as a partner backend syncing many devices sends them; each user's batches
 * follow its roll newest first. A roll's tail too short for a whole batch is not sent.
 */
export function generateTraffic(
  sample: CatalogSample,
  settings: MatchSettings,
  options: TrafficOptions,
): TrafficPlan {
  const random = new Random(options.seed);
  const venueById = new Map(sample.venues.map((venue) => [venue.id, venue]));
  const users: TrafficUser[] = [];
  const rolls: (CameraRoll | null)[] = [];
  for (let user = 0; user < options.users; user++) {
    users.push({
      email: `load-${options.seed}-${user}@example.com`,
      partner_user_id: `load-${options.seed}-${user}`,
      first_name: `Load ${user}`,
    });
    rolls.push(planCameraRoll(random, sample, venueById, settings, user));
  }
  const batches: Batch[] = [];
  const resends: { due: number; batch: Batch }[] = [];
  let active = rolls.length;
  while (batches.length < options.batches && active > 0) {
    for (let user = 0; user < rolls.length && batches.length < options.batches; user++) {
      const roll = rolls[user];
      if (!roll) continue;
      const items = takeBatch(roll, random.int(options.batchSize.min, options.batchSize.max));
      if (items === null) {
        rolls[user] = null;
        active--;
        continue;
      }
      const batch = { user, items: items.length, body: Buffer.from(JSON.stringify({ media: items })) };
      batches.push(batch);
      if (random.chance(options.resendRate)) resends.push({ due: batches.length + options.users, batch });
      while (resends[0] && resends[0].due <= batches.length && batches.length < options.batches) {
        const resend = resends.shift();
        if (resend) batches.push(resend.batch);
      }
    }
  }
  return { users, batches };
}
