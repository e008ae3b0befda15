import type { Store } from "../../store/db.ts";
import type { PerformerFacts, VenueDetail } from "../../store/eventDetails.ts";
import { type StatsRows, userStatsRows } from "../../store/stats.ts";
import type { VenuePerformerCache } from "../catalogFacts/venuePerformerCache.ts";

type EventRef = { id: number; name: string; startsAtLocal: string };
type PerformerTally = {
  id: number;
  name: string;
  category: string | null;
  imageUrl: string | null;
  eventsCount: number;
};
type VenueTally = {
  id: number;
  name: string;
  city: string | null;
  region: string | null;
  country: string | null;
  eventsCount: number;
};
type CityTally = { city: string; region: string | null; country: string | null; eventsCount: number };
type YearTally = { year: number; eventsCount: number };
type CategoryTally = { category: string; eventsCount: number };

/**
 * Statistics over a user's visible events (docs/api.md §9): licensed, not hidden, with kept media; and the
 * user's sync state, read in the same snapshot.
 */
export type UserStats = {
  hasSynced: boolean;
  /** Null until the user's first batch or sync-complete. */
  lastSyncAt: Date | null;
  eventsCount: number;
  mediaCount: number;
  photoCount: number;
  videoCount: number;
  venuesCount: number;
  citiesCount: number;
  countriesCount: number;
  performersCount: number;
  firstEvent: EventRef | null;
  latestEvent: EventRef | null;
  topPerformers: PerformerTally[];
  topVenues: VenueTally[];
  topCities: CityTally[];
  eventsByYear: YearTally[];
  categories: CategoryTally[];
};

/**
 * Code-point order, as PostgreSQL's `collate "C"` compares text (its UTF-8 bytes), so names that tie
 * sort the same whichever side sorts them. JavaScript compares UTF-16 code units, which agrees except
 * between a surrogate (half of a character above U+FFFF) and a character from U+E000 to U+FFFF: the
 * units are shifted so that surrogates come after that range, as their code points do.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number) => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

/** Nulls first, then code-point order (`collate "C" nulls first`). */
const compareNullsFirst = (a: string | null, b: string | null) =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : compareCodePoints(a, b);

/** How many of the user's visible events each key appears at, in first-seen order. */
class Tally<K, V> {
  readonly counts = new Map<K, { value: V; n: number }>();
  add(key: K, value: V, n = 1): void {
    const entry = this.counts.get(key);
    if (entry === undefined) this.counts.set(key, { value, n });
    else entry.n += n;
  }
  sorted(compareTies: (a: V, b: V) => number): { value: V; n: number }[] {
    return [...this.counts.values()].sort((a, b) => b.n - a.n || compareTies(a.value, b.value));
  }
}

/** The venues and performers of the user's visible events, by id, at the rows' catalog version. */
type StatsCatalog = {
  venues: ReadonlyMap<number, VenueDetail>;
  performers: ReadonlyMap<number, PerformerFacts>;
};

/**
 * The figures of docs/api.md §9 from the user's visible events (`rows`) and their venues and performers
 * (`catalog`; every one exists, as the catalog keeps what user_events and event_performers reference).
 * Each top list is most events first, ties by id (performers, venues) or by name in code-point order
 * (cities, then region and country, nulls first; categories); `categories` lists every category, each
 * event counted once however many of its performers share it. City figures sum the venue tallies (an
 * event has one venue).
 */
function tallyStats(rows: StatsRows, catalog: StatsCatalog, top: number): UserStats {
  const venues = new Tally<number, VenueDetail>();
  const performers = new Tally<number, PerformerFacts>();
  const categories = new Tally<string, string>();
  const years = new Tally<number, number>();
  let mediaCount = 0;
  let photoCount = 0;
  let videoCount = 0;
  for (const event of rows.visible) {
    mediaCount += event.mediaCount;
    photoCount += event.photoCount;
    videoCount += event.videoCount;
    const year = Number(event.startsAtLocal.slice(0, 4));
    years.add(year, year);
    const venue = catalog.venues.get(event.venueId);
    if (venue !== undefined) venues.add(venue.id, venue);
    const eventCategories = new Set<string>();
    for (const performerId of new Set(event.performerIds)) {
      const performer = catalog.performers.get(performerId);
      if (performer === undefined) continue;
      performers.add(performer.id, performer);
      if (performer.category !== null) eventCategories.add(performer.category);
    }
    for (const category of eventCategories) categories.add(category, category);
  }
  const cities = new Tally<string, Omit<CityTally, "eventsCount">>();
  const countries = new Set<string>();
  for (const { value: venue, n } of venues.counts.values()) {
    if (venue.country !== null) countries.add(venue.country);
    if (venue.city === null) continue;
    const place = { city: venue.city, region: venue.region, country: venue.country };
    cities.add(JSON.stringify([place.city, place.region, place.country]), place, n);
  }
  const first = rows.visible[0];
  const latest = rows.visible.at(-1);
  return {
    hasSynced: rows.hasSynced,
    lastSyncAt: rows.lastSyncAt,
    eventsCount: rows.visible.length,
    mediaCount,
    photoCount,
    videoCount,
    venuesCount: venues.counts.size,
    citiesCount: cities.counts.size,
    countriesCount: countries.size,
    performersCount: performers.counts.size,
    firstEvent: eventRef(first?.eventId, rows.firstEventName, first?.startsAtLocal),
    latestEvent: eventRef(latest?.eventId, rows.latestEventName, latest?.startsAtLocal),
    topPerformers: performers
      .sorted((a, b) => a.id - b.id)
      .slice(0, top)
      .map(({ value: { id, name, category, imageUrl }, n }) => ({
        id,
        name,
        category,
        imageUrl,
        eventsCount: n,
      })),
    topVenues: venues
      .sorted((a, b) => a.id - b.id)
      .slice(0, top)
      .map(({ value: { id, name, city, region, country }, n }) => ({
        id,
        name,
        city,
        region,
        country,
        eventsCount: n,
      })),
    topCities: cities
      .sorted(
        (a, b) =>
          compareCodePoints(a.city, b.city) ||
          compareNullsFirst(a.region, b.region) ||
          compareNullsFirst(a.country, b.country),
      )
      .slice(0, top)
      .map(({ value: { city, region, country }, n }) => ({ city, region, country, eventsCount: n })),
    eventsByYear: [...years.counts.values()]
      .sort((a, b) => a.value - b.value)
      .map(({ value, n }) => ({ year: value, eventsCount: n })),
    categories: categories
      .sorted(compareCodePoints)
      .map(({ value, n }) => ({ category: value, eventsCount: n })),
  };
}

const eventRef = (id: number | undefined, name: string | null, startsAtLocal: string | undefined) =>
  id === undefined || name === null || startsAtLocal === undefined ? null : { id, name, startsAtLocal };

/**
 * The user's statistics (docs/architecture.md §5), or null when the partner has no such user: the
 * visible events from one statement, their venues and performers from the cache at the version that
 * statement read (see `VenuePerformerCache`), the figures counted in memory.
 */
export async function readStats(
  { store, venuesAndPerformers }: { store: Store; venuesAndPerformers: VenuePerformerCache },
  owner: { partnerId: string; userId: string },
  top: number,
): Promise<UserStats | null> {
  const rows = await userStatsRows(store, owner);
  if (rows === null) return null;
  const catalog = await venuesAndPerformers.lookUp(
    store,
    rows.catalogVersion,
    new Set(rows.visible.map((event) => event.venueId)),
    new Set(rows.visible.flatMap((event) => event.performerIds)),
  );
  return tallyStats(rows, catalog, top);
}
