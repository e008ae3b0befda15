import type { Store } from "../../store/db.ts";
import type { AttendedEvent, EventFacts } from "../../store/eventDetails.ts";
import { eventFactsText, eventText } from "./eventText.ts";
import { VenuePerformerCache } from "./venuePerformerCache.ts";
import { type CacheStats, VersionedCache } from "./versionedCache.ts";

/**
 * What an entry costs besides its text: the map node, the key and the string header. Rough, as the
 * text's own size is (the runtime keeps Latin-1 text in a byte per character, anything else in two).
 */
const ENTRY_OVERHEAD_BYTES = 96;

/** The facts of those of `eventIds` the catalog holds, with the catalog version they were read at. */
export type FactsReader = (
  store: Store,
  eventIds: readonly number[],
) => Promise<{ catalogVersion: string; facts: EventFacts[] }>;

/**
 * The catalog facts of events as the API writes them (an event of docs/api.md §4 before the user's
 * `media_count` and `media`), cached by event id for one catalog version at a time (see
 * `VersionedCache`, whose rules make an import show on the very next answer).
 *
 * Every user who went to an event shows the same facts. Building them in the database was, after the
 * media lists, most of a history page's database time (docs/performance.md §7).
 */
export class EventFactsCache {
  readonly #texts: VersionedCache<string>;
  readonly #readFacts: FactsReader;

  /** `readFacts` reads what the cache lacks (`VenuePerformerCache.eventFacts`). */
  constructor(maxBytes: number, readFacts: FactsReader) {
    this.#texts = new VersionedCache<string>(maxBytes, (text) => text.length + ENTRY_OVERHEAD_BYTES);
    this.#readFacts = readFacts;
  }

  stats(): CacheStats {
    return this.#texts.stats();
  }

  /**
   * The facts of those of `eventIds` not cached at the latest catalog version this server has seen,
   * read now, with the version they were read at; null when every one is cached. A batch reads them
   * before its transaction, so a failed read stores nothing and the transaction holds the user's row
   * lock no longer than its writes need.
   */
  async readUncached(
    store: Store,
    eventIds: readonly number[],
  ): Promise<{ catalogVersion: string; facts: Map<number, EventFacts> } | null> {
    const uncached = eventIds.filter((id) => !this.#texts.has(id));
    if (uncached.length === 0) return null;
    const read = await this.#readFacts(store, uncached);
    return { catalogVersion: read.catalogVersion, facts: new Map(read.facts.map((fact) => [fact.id, fact])) };
  }

  /**
   * The JSON text of each attended event, in their order, with the facts at `catalogVersion` (or a
   * newer one, when an import commits in between). `readAlong` holds facts read at that same version;
   * the rest come from the cache when it holds that version, else from one read. Events the catalog
   * does not hold are left out.
   */
  async eventTexts(
    store: Store,
    catalogVersion: string,
    attended: readonly AttendedEvent[],
    readAlong: ReadonlyMap<number, EventFacts> = new Map(),
  ): Promise<string[]> {
    const usable = this.#texts.holds(catalogVersion);
    const facts = new Map<number, string>();
    const missing: number[] = [];
    for (const { eventId } of attended) {
      const fact = readAlong.get(eventId);
      if (fact !== undefined) {
        const text = eventFactsText(fact);
        facts.set(eventId, text);
        if (usable) this.#texts.set(eventId, text);
        continue;
      }
      const text = usable ? this.#texts.get(eventId) : undefined;
      if (text === undefined) missing.push(eventId);
      else facts.set(eventId, text);
    }
    if (missing.length > 0) {
      const read = await this.#readFacts(store, missing);
      const storable = this.#texts.holds(read.catalogVersion);
      for (const fact of read.facts) {
        const text = eventFactsText(fact);
        facts.set(fact.id, text);
        if (storable) this.#texts.set(fact.id, text);
      }
    }
    return attended.flatMap((event) => {
      const text = facts.get(event.eventId);
      return text === undefined ? [] : [eventText(text, event)];
    });
  }
}

/** The caches of catalog facts the flows share, one pair per server (or request thread). */
export type CatalogFacts = { eventFacts: EventFactsCache; venuesAndPerformers: VenuePerformerCache };

/** Half of `maxBytes` for whole events, half for the venues and performers they and the stats are built from. */
export function createCatalogFacts(maxBytes: number): CatalogFacts {
  const venuesAndPerformers = new VenuePerformerCache(maxBytes / 2);
  const eventFacts = new EventFactsCache(maxBytes / 2, (store, ids) =>
    venuesAndPerformers.eventFacts(store, ids),
  );
  return { eventFacts, venuesAndPerformers };
}
