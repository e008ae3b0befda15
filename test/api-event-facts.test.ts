/**
 * The catalog facts of history pages, batch responses and stats come from the server's cache by catalog
 * version (src/flows/catalogFacts/eventFacts.ts): an import shows on the very next answer, and the cache never serves
 * facts of another version than the one an answer was read at.
 */
import { describe, expect, test } from "bun:test";
import { EventFactsCache, type FactsReader } from "../src/flows/catalogFacts/eventFacts.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import type { Store } from "../src/store/db.ts";
import type { AttendedEvent, EventFacts } from "../src/store/eventDetails.ts";
import { event, performer, succeeded, venue } from "./support/catalogImport.ts";
import { AT_VENUE_1, DURING_100, mediaTestFile, photo } from "./support/mediaCatalog.ts";

const file = mediaTestFile();

type EventBody = { id: number; name: string; venue: { name: string }; performers: { name: string }[] };

const namesOf = (body: { events: EventBody[] }) =>
  body.events.map((e) => ({
    name: e.name,
    venue: e.venue.name,
    performers: e.performers.map((p) => p.name),
  }));

type StatsBody = {
  first_event: { name: string };
  top_venues: { name: string; city: string | null }[];
  top_performers: { name: string }[];
};

/** What stats show of the catalog, in namesOf's shape (performers by id, as the top list ties). */
const statsNamesOf = (body: StatsBody) => [
  {
    name: body.first_event.name,
    venue: body.top_venues.map((v) => v.name).join(),
    performers: body.top_performers.map((p) => p.name),
  },
];

describe("catalog facts after an import", () => {
  test("the next history page, batch response and stats show the import, without waiting for the poll", async () => {
    const { server, key } = file;
    const userId = await file.newUser();
    const first = await file.send(userId, [photo("a", DURING_100)]);
    expect(namesOf(first.body)).toEqual([
      { name: "Summer Show", venue: "Garden", performers: ["Star", "Opener", "Guest"] },
    ]);
    const page = () => server.call("GET", `/v1/users/${userId}/events`, { key });
    const stats = async () =>
      statsNamesOf((await server.call("GET", `/v1/users/${userId}/stats`, { key })).body);
    expect(namesOf((await page()).body)).toEqual(namesOf(first.body));
    expect(await stats()).toEqual([
      { name: "Summer Show", venue: "Garden", performers: ["Opener", "Star", "Guest"] },
    ]);

    // The venue, a performer and the event itself change; the venue stays where it was.
    succeeded(
      await importCatalog(
        server.store,
        memoryLines(
          [
            venue(1, "UTC", { ...AT_VENUE_1, name: "Garden Arena", city: "New York", region: "NY" }),
            performer(11, { name: "Superstar" }),
            event(100, 1, "2025-07-04T20:00:00", {
              name: "Summer Show (moved indoors)",
              performers: [
                { id: 10, is_headliner: false },
                { id: 11, is_headliner: true },
              ],
            }),
          ],
          1,
        ),
      ),
    );
    const renamed = {
      name: "Summer Show (moved indoors)",
      venue: "Garden Arena",
      performers: ["Superstar", "Opener"],
    };
    expect(namesOf((await page()).body)).toEqual([renamed]);
    expect(await stats()).toEqual([{ ...renamed, performers: ["Opener", "Superstar"] }]);
    expect(namesOf((await file.send(userId, [photo("b", DURING_100)])).body)).toEqual([renamed]);

    // A batch right after an import, the cache still holding the event at the version before it.
    succeeded(
      await importCatalog(
        server.store,
        memoryLines([event(100, 1, "2025-07-04T20:00:00", { name: "Summer Show (final)" })], 1),
      ),
    );
    const final = { name: "Summer Show (final)", venue: "Garden Arena", performers: [] };
    expect(namesOf((await file.send(userId, [photo("c", DURING_100)])).body)).toEqual([final]);
    expect(namesOf((await page()).body)).toEqual([final]);
    expect(await stats()).toEqual([final]);
  });
});

/**
 * A facts reader answering for `version` and counting the ids read, with a store nothing else reads
 * (`missing` answers no event at all).
 */
function factsReader(missing = false): {
  store: Store;
  readFacts: FactsReader;
  version: { current: string };
  read: number[][];
} {
  const version = { current: "1" };
  const read: number[][] = [];
  const readFacts: FactsReader = async (_store, ids) => {
    read.push([...ids]);
    return {
      catalogVersion: version.current,
      facts: missing ? [] : ids.map((id) => factsOf(id, version.current)),
    };
  };
  return { store: {} as Store, readFacts, version, read };
}

const factsOf = (id: number, version: string): EventFacts => ({
  id,
  name: `Event ${id} v${version}`,
  startsAtLocal: "2025-07-04T20:00:00",
  timeUnknown: false,
  venue: { id: 1, name: "Garden", city: null, region: null, country: null, latitude: 1, longitude: 2 },
  performers: [],
});

const attended = (...ids: number[]): AttendedEvent[] =>
  ids.map((eventId) => ({ eventId, mediaCount: 1, confidence: null, mediaJson: null }));

const names = (texts: string[]) => texts.map((text) => (JSON.parse(text) as { name: string }).name);

describe("EventFactsCache", () => {
  test("reads each event once per catalog version, and a newer version replaces what it holds", async () => {
    const { store, readFacts, version, read } = factsReader();
    const cache = new EventFactsCache(2 ** 20, readFacts);
    expect(names(await cache.eventTexts(store, "1", attended(7, 8)))).toEqual(["Event 7 v1", "Event 8 v1"]);
    expect(names(await cache.eventTexts(store, "1", attended(8, 9)))).toEqual(["Event 8 v1", "Event 9 v1"]);
    expect(read).toEqual([[7, 8], [9]]);
    version.current = "2";
    expect(names(await cache.eventTexts(store, "2", attended(7)))).toEqual(["Event 7 v2"]);
    expect(read.at(-1)).toEqual([7]);
  });

  test("an answer read at an older version reads its facts and leaves the cache as it was", async () => {
    const { store, readFacts, version, read } = factsReader();
    const cache = new EventFactsCache(2 ** 20, readFacts);
    version.current = "5";
    await cache.eventTexts(store, "5", attended(7));
    expect(names(await cache.eventTexts(store, "4", attended(7)))).toEqual(["Event 7 v5"]);
    expect(read).toEqual([[7], [7]]);
    await cache.eventTexts(store, "5", attended(7));
    expect(read).toHaveLength(2);
  });

  test("facts read ahead are used and kept; only what the cache lacks is read ahead", async () => {
    const { store, readFacts, read } = factsReader();
    const cache = new EventFactsCache(2 ** 20, readFacts);
    const ahead = await cache.readUncached(store, [7, 8]);
    expect(read).toEqual([[7, 8]]);
    expect(ahead?.catalogVersion).toBe("1");
    expect(names(await cache.eventTexts(store, "1", attended(7, 8), ahead?.facts))).toEqual([
      "Event 7 v1",
      "Event 8 v1",
    ]);
    expect(read).toHaveLength(1);
    expect(await cache.readUncached(store, [7, 8])).toBeNull();
    await cache.readUncached(store, [8, 9]);
    expect(read.at(-1)).toEqual([9]);
    await new EventFactsCache(0, readFacts).readUncached(store, [7]);
    expect(read.at(-1)).toEqual([7]);
  });

  test("with no room, every answer reads its facts; events the catalog lacks are left out", async () => {
    const { store, readFacts, read } = factsReader();
    const cache = new EventFactsCache(0, readFacts);
    await cache.eventTexts(store, "1", attended(7));
    await cache.eventTexts(store, "1", attended(7));
    expect(read).toEqual([[7], [7]]);
    const none = factsReader(true);
    expect(
      await new EventFactsCache(2 ** 20, none.readFacts).eventTexts(none.store, "1", attended(7)),
    ).toEqual([]);
  });
});
