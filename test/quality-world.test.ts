import { describe, expect, test } from "bun:test";
import { random } from "../load/bench-match-catalog.ts";
import { generateWorld } from "../load/quality/world.ts";
import { doubleHeaderPairs, parkingLot } from "../load/quality/worldAttendance.ts";
import { barSpot, festivalHome, hotelRoom } from "../load/quality/worldBystanders.ts";
import { Catalog } from "../load/quality/worldCatalog.ts";
import { type City, dayOf, FOOTPRINT_M, hourOf, radiusOf } from "../load/quality/worldGeometry.ts";
import { showEnd } from "../load/quality/worldLife.ts";
import type { WorldOptions, WorldVenue } from "../load/quality/worldModel.ts";
import { haversineMeters } from "../src/shards/geo.ts";
import type { MatchSettings } from "../src/shards/matcher.ts";

/** The quality benchmark's simulated world: where its new kinds of user stand, and honest truth. */

const settings: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const options: WorldOptions = { seed: 3, users: 80, cities: 6, venuesPerCity: 20, mix: "new" };
const catalog = new Catalog(random(options.seed), options);
const scene = { next: random(7), catalog, settings };
const share = (at: [number, number], venue: WorldVenue) =>
  haversineMeters(at[0], at[1], venue.latitude, venue.longitude) / radiusOf(venue, settings);
const venue = (kind: WorldVenue["kind"], radiusM: number | null): WorldVenue => ({
  id: 1,
  latitude: 40,
  longitude: -3,
  radiusM,
  kind,
  city: 0,
  neighbour: null,
});

describe("where the new kinds of user photograph from", () => {
  test("a hotel room is at 30-90% of its arena's or stadium's radius", () => {
    for (const v of catalog.venues.filter((x) => x.kind === "arena" || x.kind === "stadium")) {
      const at = share(hotelRoom(scene, v), v);
      expect(at).toBeGreaterThanOrEqual(0.3 - 1e-6);
      expect(at).toBeLessThanOrEqual(0.9 + 1e-6);
    }
  });

  test("a bar is 250-450 m from a large venue, at 60-95% of a smaller one's radius", () => {
    const large = venue("stadium", 1000);
    const small = venue("arena", 300);
    for (let i = 0; i < 200; i++) {
      const metres = share(barSpot(scene, large), large) * 1000;
      expect(metres).toBeGreaterThanOrEqual(250 - 1e-3);
      expect(metres).toBeLessThanOrEqual(450 + 1e-3);
      const at = share(barSpot(scene, small), small);
      expect(at).toBeGreaterThanOrEqual(0.6 - 1e-6);
      expect(at).toBeLessThanOrEqual(0.95 + 1e-6);
    }
  });

  test("a festival neighbour lives inside the ground's radius, outside its stage area; a tailgater parks 150-400 m out", () => {
    const ground = venue("festival", 1000);
    const stadium = venue("stadium", 900);
    for (let i = 0; i < 200; i++) {
      const home = share(festivalHome(scene, ground), ground) * 1000;
      expect(home).toBeGreaterThanOrEqual(FOOTPRINT_M.festival);
      expect(home).toBeLessThanOrEqual(1000 + 1e-3);
      const lot = share(parkingLot(scene, stadium), stadium) * 900;
      expect(lot).toBeGreaterThanOrEqual(150 - 1e-3);
      expect(lot).toBeLessThanOrEqual(400 + 1e-3);
    }
  });

  test("a double-header is a day game and a later show the same day in the same city", () => {
    const pairs = doubleHeaderPairs(catalog, 1);
    expect(pairs.length).toBeGreaterThan(10);
    const city = catalog.cities[1] as City;
    for (const [game, show] of pairs) {
      expect(catalog.venue(game.venueId).kind).toBe("stadium");
      expect(catalog.venue(show.venueId).city).toBe(1);
      expect(hourOf(city, game.startsAtMs)).toBeLessThan(17);
      expect(dayOf(city, show.startsAtMs)).toBe(dayOf(city, game.startsAtMs));
      expect(show.startsAtMs).toBeGreaterThanOrEqual(showEnd(game));
    }
  });
});

describe("the simulated world", () => {
  test("truth is exactly the licensed events a user's photos were taken at; none is a trip's or a bar's", () => {
    const world = generateWorld(options, settings);
    const events = new Map(world.events.map((e) => [e.id, e]));
    const venues = new Map(world.venues.map((v) => [v.id, v]));
    const cityOf = (eventId: number) => venues.get(events.get(eventId)?.venueId ?? 0)?.city;
    for (const user of world.users) {
      const at = new Set(
        world.photos
          .filter((p) => p.user === user.id && p.origin !== 0 && events.get(p.origin)?.licensed)
          .map((p) => p.origin),
      );
      expect([...user.truth].sort()).toEqual([...at].sort());
      // Hotel guests are at events only at home: their hotel nights are in other cities.
      for (const id of user.truth) expect(cityOf(id)).toBe(user.city);
    }
    const guests = world.users.filter((u) => u.kind === "hotel-guest");
    expect(guests.length).toBeGreaterThan(5);
  });

  test("every true event says how it was photographed: a queue alone is all before the start, then inside is not", () => {
    const world = generateWorld({ ...options, mix: "all", users: 160 }, settings);
    const starts = new Map(world.events.map((e) => [e.id, e.startsAtMs]));
    const ways = new Set<string>();
    for (const user of world.users) {
      expect([...user.ways.keys()].sort()).toEqual([...user.truth].sort());
      for (const [eventId, way] of user.ways) {
        ways.add(way);
        // A phone whose clock is off stamps its photos hours away from when they were taken.
        if (user.kind === "clock-off") continue;
        const times = world.photos
          .filter((p) => p.user === user.id && p.origin === eventId)
          .map((p) => p.takenAtMs);
        const start = starts.get(eventId) as number;
        if (way === "queue alone") expect(times.every((t) => t < start)).toBe(true);
        if (way === "queue, then inside") expect(times.some((t) => t >= start)).toBe(true);
        if (way === "tailgate, then inside") expect(user.kind).toBe("tailgater");
        if (way === "day game and evening show") expect(user.kind).toBe("double-header");
      }
    }
    expect(ways.size).toBe(6);
  });

  test("the old mix is the first version's kinds and shares", () => {
    const world = generateWorld({ ...options, users: 40, mix: "old" }, settings);
    const count = (kind: string) => world.users.filter((u) => u.kind === kind).length;
    expect(world.kinds).toEqual([
      "attendee",
      "next-door",
      "festival",
      "season-ticket",
      "clock-off",
      "resident",
      "worker",
      "passer-by",
    ]);
    expect(world.kinds.map(count)).toEqual([10, 4, 2, 2, 2, 6, 4, 10]);
  });
});
