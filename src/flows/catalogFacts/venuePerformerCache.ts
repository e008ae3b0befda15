import type { Store } from "../../store/db.ts";
import {
  type EventFacts,
  type PerformerFacts,
  readEventCores,
  readVenuesAndPerformers,
  type VenueDetail,
} from "../../store/eventDetails.ts";
import { type CacheStats, VersionedCache } from "./versionedCache.ts";

/**
 * What an entry costs besides its strings: the map node, the key and the object with its fields.
 * Rough, as the strings' own size is (two bytes a character at most).
 */
const ENTRY_OVERHEAD_BYTES = 160;

const sizeOf = (facts: VenueDetail | PerformerFacts) =>
  ENTRY_OVERHEAD_BYTES +
  2 *
    Object.values(facts).reduce<number>(
      (sum, value) => sum + (typeof value === "string" ? value.length : 0),
      0,
    );

/** Venues are few (a catalog of 2M events has 5,000); performers share the rest. */
const VENUE_SHARE = 0.25;

/**
 * Venues and performers by id, for one catalog version at a time (see `VersionedCache`): what stats
 * tally, and what the facts of an event are built from when the event's own cache lacks it. Unlike
 * whole events, of which a catalog holds millions and users attend hundreds of thousands, they are few
 * enough to stay in memory, and reading them by key was most of a stats request's database time and
 * much of reading an event's facts (docs/performance.md §7).
 */
export class VenuePerformerCache {
  readonly #venues: VersionedCache<VenueDetail>;
  readonly #performers: VersionedCache<PerformerFacts>;

  constructor(maxBytes: number) {
    this.#venues = new VersionedCache<VenueDetail>(Math.floor(maxBytes * VENUE_SHARE), sizeOf);
    this.#performers = new VersionedCache<PerformerFacts>(Math.floor(maxBytes * (1 - VENUE_SHARE)), sizeOf);
  }

  /** Venues and performers together: one hit ratio for the facts stats and pages are built from. */
  stats(): CacheStats {
    const venues = this.#venues.stats();
    const performers = this.#performers.stats();
    return {
      hits: venues.hits + performers.hits,
      misses: venues.misses + performers.misses,
      entries: venues.entries + performers.entries,
    };
  }

  /**
   * The venues and performers of these ids at `catalogVersion` (or a newer one, when an import
   * commits before the cache's misses are read), by id; ids the catalog lacks are left out.
   */
  async lookUp(
    store: Store,
    catalogVersion: string,
    venueIds: Iterable<number>,
    performerIds: Iterable<number>,
  ): Promise<{ venues: Map<number, VenueDetail>; performers: Map<number, PerformerFacts> }> {
    const venues = new Map<number, VenueDetail>();
    const performers = new Map<number, PerformerFacts>();
    const missingVenues = cachedInto(this.#venues, catalogVersion, venueIds, venues);
    const missingPerformers = cachedInto(this.#performers, catalogVersion, performerIds, performers);
    if (missingVenues.length > 0 || missingPerformers.length > 0) {
      const read = await readVenuesAndPerformers(store, missingVenues, missingPerformers);
      keep(this.#venues, read.catalogVersion, read.venues, venues);
      keep(this.#performers, read.catalogVersion, read.performers, performers);
    }
    return { venues, performers };
  }

  /**
   * The facts of those of `eventIds` the catalog holds, at the catalog version they were read at (their
   * venues and performers at that version, or a newer one when an import commits in between), built
   * from the events' rows and billing and this cache.
   */
  async eventFacts(
    store: Store,
    eventIds: readonly number[],
  ): Promise<{ catalogVersion: string; facts: EventFacts[] }> {
    const { catalogVersion, cores } = await readEventCores(store, eventIds);
    const { venues, performers } = await this.lookUp(
      store,
      catalogVersion,
      new Set(cores.map((core) => core.venueId)),
      new Set(cores.flatMap((core) => core.billing.map((billed) => billed.performerId))),
    );
    const facts = cores.flatMap((core): EventFacts[] => {
      const venue = venues.get(core.venueId);
      if (venue === undefined) return [];
      return [
        {
          id: core.id,
          name: core.name,
          startsAtLocal: core.startsAtLocal,
          timeUnknown: core.timeUnknown,
          venue,
          performers: core.billing.flatMap(({ performerId, isHeadliner }) => {
            const performer = performers.get(performerId);
            return performer === undefined ? [] : [{ ...performer, isHeadliner }];
          }),
        },
      ];
    });
    return { catalogVersion, facts };
  }
}

/** Copies the cached entries of `ids` into `found` and returns the ids it lacks. */
function cachedInto<V extends { id: number }>(
  cache: VersionedCache<V>,
  version: string,
  ids: Iterable<number>,
  found: Map<number, V>,
): number[] {
  const usable = cache.holds(version);
  const missing: number[] = [];
  for (const id of ids) {
    const entry = usable ? cache.get(id) : undefined;
    if (entry === undefined) missing.push(id);
    else found.set(id, entry);
  }
  return missing;
}

/** Adds what was read to `found`, and to the cache when it was read at the cache's version. */
function keep<V extends { id: number }>(
  cache: VersionedCache<V>,
  version: string,
  read: readonly V[],
  found: Map<number, V>,
): void {
  const storable = cache.holds(version);
  for (const entry of read) {
    found.set(entry.id, entry);
    if (storable) cache.set(entry.id, entry);
  }
}
