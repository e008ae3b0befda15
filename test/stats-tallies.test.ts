import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { VenuePerformerCache } from "../src/flows/catalogFacts/venuePerformerCache.ts";
import { compareCodePoints, readStats } from "../src/flows/stats/readStats.ts";
import { createPartner } from "../src/store/keys.ts";
import { eventPerformers, events, performers, userEvents, venues } from "../src/store/schema/index.ts";
import { newUser } from "./support/batchWrites.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { referenceStats } from "./support/statsReference.ts";

/**
 * The server tallies stats from cached venues and performers; these tests hold it to the SQL statement that
 * computed them before (test/support/statsReference.ts), on random catalogs whose names tie, differ
 * only in case or sit on both sides of the places where UTF-16 and code-point order disagree.
 */

let database: TestDatabase;
let userId: string;

/** Names that tie, differ in case, and straddle U+E000..U+FFFF against characters above U+FFFF. */
const NAMES = ["a", "A", "b", "Zürich", "Ångström", "\uff21 wide", "😀 emoji", "\ue000 private", "a", "ab"];
const name = fc.constantFrom(...NAMES);
/** Few places, so that cities tie on their name and differ only in region or country. */
const place = fc.constantFrom("a", "A", "😀 emoji", "\uff21 wide");
const nullable = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: null, freq: 3 });
const INSTANTS = ["2023-05-01T20:00:00Z", "2024-12-31T23:30:00Z", "2025-01-01T04:00:00Z"];

const catalogArbitrary = fc
  .record({
    venues: fc.array(
      fc.record({ name, city: nullable(place), region: nullable(place), country: nullable(place) }),
      { minLength: 1, maxLength: 6 },
    ),
    performers: fc.array(fc.record({ name, category: nullable(place), imageUrl: nullable(name) }), {
      minLength: 1,
      maxLength: 6,
    }),
    events: fc.array(
      fc.record({
        name,
        venue: fc.nat(),
        instant: fc.constantFrom(...INSTANTS),
        year: fc.integer({ min: 2019, max: 2026 }),
        licensed: fc.boolean(),
        billed: fc.uniqueArray(fc.nat({ max: 5 }), { maxLength: 4 }),
        kept: fc.record({ photos: fc.nat({ max: 3 }), videos: fc.nat({ max: 2 }), hidden: fc.boolean() }),
      }),
      { minLength: 0, maxLength: 12 },
    ),
  })
  .map((catalog) => ({
    ...catalog,
    events: catalog.events.map((event) => ({
      ...event,
      venue: 1 + (event.venue % catalog.venues.length),
      billed: event.billed.filter((p) => p < catalog.performers.length).map((p) => p + 1),
    })),
  }));
type Catalog = typeof catalogArbitrary extends fc.Arbitrary<infer T> ? T : never;

/** One city name at five venues, one event each: only region, then country (nulls first) order them. */
const tiedCities: Catalog = {
  venues: [
    { name: "v", city: "a", region: "A", country: "A" },
    { name: "v", city: "a", region: "A", country: null },
    { name: "v", city: "a", region: null, country: "a" },
    { name: "v", city: "a", region: "A", country: "a" },
    { name: "v", city: "a", region: null, country: null },
  ],
  performers: [{ name: "p", category: null, imageUrl: null }],
  events: [1, 2, 3, 4, 5].map((venue) => ({
    name: "e",
    venue,
    instant: "2025-01-01T04:00:00Z",
    year: 2025,
    licensed: true,
    billed: [],
    kept: { photos: 1, videos: 0, hidden: false },
  })),
};

async function replaceCatalog(catalog: Catalog): Promise<void> {
  const { db } = database.store;
  await database.store.rows(sql`truncate user_events, event_performers, events, performers, venues cascade`);
  const location = { latitude: 0, longitude: 0, timezone: "UTC", radiusM: null };
  await db.insert(venues).values(catalog.venues.map((venue, i) => ({ id: i + 1, ...venue, ...location })));
  await db.insert(performers).values(catalog.performers.map((performer, i) => ({ id: i + 1, ...performer })));
  if (catalog.events.length === 0) return;
  await db.insert(events).values(
    catalog.events.map((event, i) => ({
      id: 100 + i,
      name: event.name,
      venueId: event.venue,
      startsAtLocal: `${event.year}-06-01T20:00:00`,
      startsAt: new Date(event.instant),
      licensed: event.licensed,
    })),
  );
  const billing = catalog.events.flatMap((event, i) =>
    event.billed.map((performerId, position) => ({
      eventId: 100 + i,
      performerId,
      position,
      isHeadliner: null,
    })),
  );
  if (billing.length > 0) await db.insert(eventPerformers).values(billing);
  await db.insert(userEvents).values(
    catalog.events.map((event, i) => ({
      userId,
      eventId: 100 + i,
      startsAt: new Date(event.instant),
      startsAtLocal: `${event.year}-06-01T20:00:00`,
      venueId: event.venue,
      licensed: event.licensed,
      mediaCount: event.kept.photos + event.kept.videos,
      photoCount: event.kept.photos,
      videoCount: event.kept.videos,
      hidden: event.kept.hidden,
    })),
  );
}

beforeAll(async () => {
  database = await createTestDatabase(2);
  await createPartner(database.store, { id: "acme", name: "Acme" });
  userId = await newUser(database.store, "tallies@example.com");
});

afterAll(async () => {
  await database.drop();
});

describe("stats tallies", () => {
  test('compareCodePoints orders as PostgreSQL\'s collate "C"', async () => {
    const strings = [...NAMES, "", "a\u0000", "\uffff", "\u{10000}", "\ud7ff", "é", "e\u0301", "Z", "z"];
    const [row] = await database.store.rows<{ sorted: string[] }>(
      sql`select array_agg(s order by s collate "C") as sorted
          from unnest(${sql.param(strings.filter((s) => !s.includes("\u0000")))}::text[]) s`,
    );
    const sorted = strings.filter((s) => !s.includes("\u0000")).sort(compareCodePoints);
    expect(sorted).toEqual(row?.sorted ?? []);
  });

  test("equal the reference statement's for random catalogs, every top", async () => {
    await fc.assert(
      fc.asyncProperty(catalogArbitrary, fc.constantFrom(1, 3, 50), async (catalog, top) => {
        await replaceCatalog(catalog);
        const owner = { partnerId: "acme", userId };
        const venuesAndPerformers = new VenuePerformerCache(2 ** 20);
        const tallied = await readStats({ store: database.store, venuesAndPerformers }, owner, top);
        expect(tallied).toEqual(await referenceStats(database.store, owner, top));
      }),
      { numRuns: 100, examples: [[tiedCities, 50]] },
    );
  });

  test("venues and performers are read once per catalog version; an older version's answer keeps nothing", async () => {
    await replaceCatalog(tiedCities);
    const setVersion = (version: number) =>
      database.store.rows(sql`insert into catalog_state (id, version) values (1, ${version})
        on conflict (id) do update set version = excluded.version`);
    let reads = 0;
    const store = {
      ...database.store,
      read: <T>(query: Parameters<typeof database.store.read>[0]) => {
        reads++;
        return database.store.read<T>(query);
      },
    };
    const cache = new VenuePerformerCache(2 ** 20);
    /** How many statements one look-up of venues 1 and 2 and performer 1 took. */
    const lookUp = async (version: string) => {
      const before = reads;
      const found = await cache.lookUp(store, version, [1, 2], [1]);
      expect([...found.venues.keys()].sort()).toEqual([1, 2]);
      expect([...found.performers.values()].map((p) => p.name)).toEqual(["p"]);
      return reads - before;
    };
    await setVersion(7);
    expect(await lookUp("7")).toBe(1);
    expect(await lookUp("7")).toBe(0);
    await setVersion(8);
    expect(await lookUp("8")).toBe(1);
    expect(await lookUp("7")).toBe(1);
    expect(await lookUp("8")).toBe(0);
    const off = new VenuePerformerCache(0);
    const before = reads;
    await off.lookUp(store, "8", [1], [1]);
    await off.lookUp(store, "8", [1], [1]);
    expect(reads - before).toBe(2);
  });
});
