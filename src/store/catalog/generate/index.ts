import { generateRoster } from "./performers.ts";
import { generateVenues } from "./places.ts";
import { Random } from "./random.ts";
import { Schedule } from "./schedule.ts";

/**
 * A deterministic synthetic catalog in the import format (docs/operations.md §3): all venues, then all
 * performers, then the events, one JSON line each. The same options always yield the same lines.
 */

export type GenerateOptions = { events: number; seed: number };

/** About 400 events per venue over the seven years: a busy club plays a few nights a week. */
const EVENTS_PER_VENUE = 400;

export function* generateCatalog(options: GenerateOptions): Generator<string> {
  const random = new Random(options.seed);
  const venues = generateVenues(random, Math.max(12, Math.round(options.events / EVENTS_PER_VENUE)));
  const roster = generateRoster(random, options.events, venues);
  for (const v of venues) {
    yield JSON.stringify({
      type: "venue",
      id: v.id,
      name: v.name,
      city: v.city,
      region: v.region,
      country: v.country,
      latitude: v.latitude,
      longitude: v.longitude,
      timezone: v.timezone,
      radius_m: v.radiusM,
    });
  }
  for (const p of roster.performers) {
    yield JSON.stringify({
      type: "performer",
      id: p.id,
      name: p.name,
      category: p.category,
      image_url: p.imageUrl,
    });
  }
  const schedule = new Schedule(random, venues, roster);
  for (let id = 1; id <= options.events; id++) yield JSON.stringify(schedule.event(id));
}
