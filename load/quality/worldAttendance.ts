import type { Catalog } from "./worldCatalog.ts";
import {
  atDistance,
  type City,
  DAYS,
  FOOTPRINT_M,
  HOUR_MS,
  hourOf,
  int,
  MINUTE_MS,
  pick,
  radiusOf,
  scatter,
} from "./worldGeometry.ts";
import { attend, eventDay, freeEvent, type Life, type Scene, type Shoot, showEnd } from "./worldLife.ts";
import type { AttendanceWay, WorldEvent, WorldVenue } from "./worldModel.ts";

/** How people at events photograph them: any audience member, tailgaters, and double-header days. */

/** A place in a venue's stands or hall, uniform by area. */
export function seatIn(scene: Scene, venue: WorldVenue): [number, number] {
  return atDistance(
    scene.next,
    venue.latitude,
    venue.longitude,
    FOOTPRINT_M[venue.kind] * Math.sqrt(scene.next()),
  );
}

/**
 * Photos at one event, from the user's seat and a few metres around it: spread over the show, only
 * around its start, or from the queue at the edge of the radius before the start, then a few inside.
 */
export function atEvent(
  scene: Scene,
  event: WorldEvent,
  seatAt: [number, number],
  take: Shoot,
): AttendanceWay {
  const shoot = (at: [number, number], takenAtMs: number) => take(at, takenAtMs, event.id);
  const next = scene.next;
  const venue = scene.catalog.venue(event.venueId);
  const radius = radiusOf(venue, scene.settings);
  const start = event.startsAtMs;
  const end = event.endsAtMs ?? start + scene.settings.defaultDurationMinutes * MINUTE_MS;
  const seat = () => scatter(next, seatAt[0], seatAt[1], 10);
  const pattern = next();
  if (pattern < 0.55) {
    const count = 1 + Math.floor(-Math.log(1 - next()) * 6);
    for (let k = 0; k < Math.min(count, 40); k++) shoot(seat(), start + next() * (end - start));
    return "across the show";
  }
  if (pattern < 0.8) {
    for (let k = int(next, 1, 4); k > 0; k--) shoot(seat(), start - 20 * MINUTE_MS + next() * 50 * MINUTE_MS);
    return "around the start";
  }
  const queue = atDistance(next, venue.latitude, venue.longitude, radius * (0.75 + 0.25 * next()));
  for (let k = int(next, 1, 3); k > 0; k--) shoot(queue, start - (10 + 65 * next()) * MINUTE_MS);
  const inside = int(next, 0, 5);
  for (let k = inside; k > 0; k--) shoot(seat(), start + next() * (end - start));
  return inside > 0 ? "queue, then inside" : "queue alone";
}

/**
 * Where a tailgater parks: outside the stadium, 150-400 m from its point when that is inside the
 * radius, else 40-80% of the radius.
 */
export function parkingLot(scene: Scene, venue: WorldVenue): [number, number] {
  const radius = radiusOf(venue, scene.settings);
  const metres = radius > 400 ? 150 + 250 * scene.next() : radius * (0.4 + 0.4 * scene.next());
  return atDistance(scene.next, venue.latitude, venue.longitude, metres);
}

/**
 * Stadium games of the user's team (now and then the other stadium's): photos around the car one to
 * three hours before the start, mostly from a favourite lot, then a few from the seat during the game.
 */
export function tailgate(life: Life) {
  const { next, catalog } = life;
  const stadiums = catalog.venuesIn(life.user.city, ["stadium"]);
  const team = pick(next, stadiums);
  const favourite = new Map<number, [number, number]>();
  for (let games = int(next, 4, 12); games > 0; games--) {
    const venue = next() < 0.85 ? team : pick(next, stadiums);
    const game = freeEvent(life, catalog.eventsAt(venue.id));
    if (game === null) continue;
    attend(life.user, game, "tailgate, then inside");
    let usual = favourite.get(venue.id);
    if (usual === undefined) {
      usual = parkingLot(life, venue);
      favourite.set(venue.id, usual);
    }
    const lot = next() < 0.6 ? usual : parkingLot(life, venue);
    const start = game.startsAtMs;
    for (let k = int(next, 2, 6); k > 0; k--)
      life.shoot(scatter(next, lot[0], lot[1], 15), start - (1 + 2 * next()) * HOUR_MS, game.id);
    const seat = seatIn(life, venue);
    for (let k = int(next, 1, 4); k > 0; k--)
      life.shoot(scatter(next, seat[0], seat[1], 10), start + next() * (showEnd(game) - start), game.id);
  }
}

/**
 * Same-day pairs in a city: a stadium game starting before 17:00 and an evening event (any venue but
 * a festival ground, the same stadium too) starting at least 45 minutes after the game ends.
 */
export function doubleHeaderPairs(catalog: Catalog, city: number): [WorldEvent, WorldEvent][] {
  const pairs: [WorldEvent, WorldEvent][] = [];
  const local = catalog.cities[city] as City;
  for (let day = 0; day < DAYS; day++) {
    const events = catalog.eventsOn(city, day);
    for (const game of events) {
      if (catalog.venue(game.venueId).kind !== "stadium" || hourOf(local, game.startsAtMs) >= 17) continue;
      for (const show of events) {
        if (catalog.venue(show.venueId).kind === "festival") continue;
        if (show.startsAtMs >= showEnd(game) + 45 * MINUTE_MS) pairs.push([game, show]);
      }
    }
  }
  return pairs;
}

/**
 * One to three days a year with a day game and an evening show: photos from the stands during the
 * game, then at the show's door shortly before it starts and from a seat during it.
 */
export function doubleHeaders(life: Life) {
  const { next, catalog } = life;
  const pairs = doubleHeaderPairs(catalog, life.user.city);
  for (let days = int(next, 1, 3); days > 0 && pairs.length > 0; days--) {
    const [game, show] = pick(next, pairs);
    const day = eventDay(life, game);
    if (life.busy.has(day)) continue;
    life.busy.add(day);
    for (const event of [game, show]) {
      attend(life.user, event, "day game and evening show");
      const venue = catalog.venue(event.venueId);
      const seat = seatIn(life, venue);
      const start = event.startsAtMs;
      if (event === show) {
        const door = atDistance(next, venue.latitude, venue.longitude, FOOTPRINT_M[venue.kind] + 30);
        for (let k = int(next, 0, 2); k > 0; k--)
          life.shoot(scatter(next, door[0], door[1], 10), start - 30 * next() * MINUTE_MS, event.id);
      }
      for (let k = int(next, 2, 6); k > 0; k--)
        life.shoot(scatter(next, seat[0], seat[1], 10), start + next() * (showEnd(event) - start), event.id);
    }
  }
}
