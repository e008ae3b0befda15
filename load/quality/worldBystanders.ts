import { haversineMeters } from "../../src/shards/geo.ts";
import {
  atDistance,
  type City,
  DAYS,
  FOOTPRINT_M,
  instant,
  int,
  MINUTE_MS,
  pick,
  radiusOf,
  scatter,
} from "./worldGeometry.ts";
import { eventDay, freeEvent, type Life, type Scene, showEnd } from "./worldLife.ts";
import type { WorldVenue } from "./worldModel.ts";

/**
 * People who photograph inside a venue's radius during its events without being at them: hotel
 * guests, sports-bar regulars, and neighbours of a festival ground. None of it is in their truth.
 */

/** A hotel room 30-90% of the way from a venue's point to the edge of its radius. */
export function hotelRoom(scene: Scene, venue: WorldVenue): [number, number] {
  const metres = radiusOf(venue, scene.settings) * (0.3 + 0.6 * scene.next());
  return atDistance(scene.next, venue.latitude, venue.longitude, metres);
}

/**
 * One to three trips a year, each to another city, of one to three nights in a hotel near an arena
 * or a stadium over one of its events: photos from the room through each evening, and around the
 * city by day. The user is away from home from the first day to the day of leaving.
 */
export function hotelStays(life: Life) {
  const { next, catalog } = life;
  const cities = catalog.cities.map((_, c) => c).filter((c) => c !== life.user.city);
  for (let trips = int(next, 1, 3); trips > 0 && cities.length > 0; trips--) {
    const c = cities.splice(Math.floor(next() * cities.length), 1)[0] as number;
    const city = catalog.cities[c] as City;
    const venue = pick(next, catalog.venuesIn(c, ["stadium", "arena"]));
    const nights = int(next, 1, 3);
    const show = pick(next, catalog.eventsAt(venue.id));
    const first = Math.min(Math.max(eventDay(life, show) - int(next, 0, nights - 1), 0), DAYS - 1 - nights);
    const stay = Array.from({ length: nights + 1 }, (_, d) => first + d);
    if (stay.some((day) => life.busy.has(day) || life.away.has(day))) continue;
    for (const day of stay) life.away.add(day);
    const room = catalog.outsideBuildings(() => hotelRoom(life, venue));
    for (const day of stay) {
      for (let k = int(next, 1, 4); k > 0; k--)
        life.shoot(scatter(next, city.latitude, city.longitude, 4000), instant(city, day, 9 + 9 * next()));
      if (day === first + nights) continue;
      for (let k = int(next, 3, 7); k > 0; k--)
        life.shoot(scatter(next, room[0], room[1], 5), instant(city, day, 18 + 5.5 * next()));
    }
  }
}

/**
 * A sports bar near a venue: 250-450 m from its point when the radius reaches past that, else at
 * 60-95% of the radius.
 */
export function barSpot(scene: Scene, venue: WorldVenue): [number, number] {
  const radius = radiusOf(venue, scene.settings);
  const metres = radius >= 450 ? 250 + 200 * scene.next() : radius * (0.6 + 0.35 * scene.next());
  return atDistance(scene.next, venue.latitude, venue.longitude, metres);
}

/** A bar spot of `venue` that is also inside its neighbour's radius and in no building, or null. */
function sharedBar(life: Life, venue: WorldVenue, neighbour: WorldVenue): [number, number] | null {
  const reach = 0.95 * radiusOf(neighbour, life.settings);
  for (let tries = 0; tries < 100; tries++) {
    const at = barSpot(life, venue);
    const metres = haversineMeters(at[0], at[1], neighbour.latitude, neighbour.longitude);
    if (metres <= reach && !life.catalog.inBuilding(at)) return at;
  }
  return null;
}

/**
 * Event nights at a sports bar inside a stadium's or arena's radius, several photos across each game.
 * Some bars lie between an arena and its neighbouring venue, their nights split between the two.
 */
export function barNights(life: Life, low: number, high: number) {
  const { next, catalog } = life;
  const venues = catalog.venuesIn(life.user.city, ["stadium", "arena"]);
  const paired = venues.filter((v) => v.neighbour !== null);
  let watched = [pick(next, venues)];
  let bar: [number, number] | null = null;
  if (paired.length > 0 && next() < 0.4) {
    const venue = pick(next, paired);
    const neighbour = catalog.venue(venue.neighbour as number);
    bar = sharedBar(life, venue, neighbour);
    if (bar !== null) watched = [venue, neighbour];
  }
  const at = bar ?? catalog.outsideBuildings(() => barSpot(life, watched[0] as WorldVenue));
  const nights = int(next, low, high);
  for (let night = 0; night < nights; night++) {
    const venue = watched[night % watched.length] as WorldVenue;
    const game = freeEvent(life, catalog.eventsAt(venue.id));
    if (game === null) continue;
    const from = game.startsAtMs - 20 * MINUTE_MS;
    const to = showEnd(game) + 20 * MINUTE_MS;
    for (let k = int(next, 3, 8); k > 0; k--)
      life.shoot(scatter(next, at[0], at[1], 8), from + next() * (to - from));
  }
}

/** A home inside a festival ground's radius, uniform by area, outside its stage area. */
export function festivalHome(scene: Scene, ground: WorldVenue): [number, number] {
  const radius = radiusOf(ground, scene.settings);
  const inner = Math.min(radius, FOOTPRINT_M[ground.kind] + 20);
  const metres = Math.sqrt(inner ** 2 + scene.next() * (radius ** 2 - inner ** 2));
  return atDistance(scene.next, ground.latitude, ground.longitude, metres);
}

/**
 * Lives inside a festival ground's radius: home photos through most festival days, and walks a few
 * hundred metres from home then and all year.
 */
export function festivalNeighbour(life: Life) {
  const { next, catalog, centre } = life;
  const ground = pick(next, catalog.venuesIn(life.user.city, ["festival"]));
  const home = catalog.outsideBuildings(() => festivalHome(life, ground));
  life.home = home;
  const street = () => atDistance(next, home[0], home[1], 150 + 350 * next());
  for (const day of catalog.eventsAt(ground.id).map((event) => eventDay(life, event))) {
    if (next() < 0.2) continue;
    for (let k = int(next, 1, 4); k > 0; k--) life.shoot(home, instant(centre, day, 10 + 13 * next()));
    for (let k = int(next, 0, 2); k > 0; k--) life.shoot(street(), instant(centre, day, 11 + 11 * next()));
  }
  for (let day = 0; day < DAYS; day++)
    if (next() < 0.2) life.shoot(street(), instant(centre, day, 8 + 14 * next()));
}
