import type { MatchSettings } from "../../src/shards/matcher.ts";
import { random } from "../bench-match-catalog.ts";
import { atEvent, doubleHeaders, seatIn, tailgate } from "./worldAttendance.ts";
import { barNights, festivalNeighbour, hotelStays } from "./worldBystanders.ts";
import { Catalog } from "./worldCatalog.ts";
import {
  atDistance,
  type City,
  DAYS,
  FOOTPRINT_M,
  HOUR_MS,
  instant,
  int,
  pick,
  type Rng,
  radiusOf,
  scatter,
} from "./worldGeometry.ts";
import { attend, eventDay, type Life, type Scene } from "./worldLife.ts";
import {
  KIND_EVENTS,
  MIX_SHARES,
  type Photo,
  type UserKind,
  type World,
  type WorldEvent,
  type WorldOptions,
  type WorldUser,
  type WorldVenue,
} from "./worldModel.ts";

/**
 * Simulated camera rolls with known truth, for measuring how right a user's history is. A year of
 * events in a few cities, and users of the kinds that make the matching rule go wrong: people at
 * events (photos over the show, only at its start, or from the queue at the radius's edge), people
 * living or working inside a venue's radius, passers-by, shows at neighbouring venues at the same
 * time, multi-day festivals, season-ticket holders, phones whose clock is off by hours, and GPS error
 * on every photo; in the new mix also hotel guests, sports-bar regulars and festival-ground
 * neighbours (none at the events), tailgaters and double-header days. Deterministic for a seed.
 */

/** What a kind does beyond home, work, town and its ordinary events (worldAttendance, worldBystanders). */
const BEHAVIOURS: Partial<Record<UserKind, (life: Life) => void>> = {
  "hotel-guest": hotelStays,
  "bar-few-nights": (life) => barNights(life, 2, 4),
  "bar-many-nights": (life) => barNights(life, 8, 20),
  "festival-neighbour": festivalNeighbour,
  tailgater: tailgate,
  "double-header": doubleHeaders,
};

/** Kinds that live in a city with a festival ground (every third city). */
const FESTIVAL_CITY: readonly UserKind[] = ["festival", "festival-neighbour"];

class People {
  readonly users: WorldUser[] = [];
  readonly photos: Photo[] = [];
  private readonly scene: Scene;

  constructor(
    private readonly next: Rng,
    private readonly catalog: Catalog,
    private readonly settings: MatchSettings,
    options: WorldOptions,
  ) {
    this.scene = { next, catalog, settings };
    const shares = Object.entries(MIX_SHARES[options.mix]) as [UserKind, number][];
    let id = 0;
    for (const [kind, share] of shares) {
      const users = Math.round(options.users * share);
      for (let i = 0; i < users && id < options.users; i++) this.user(id++, kind);
    }
    while (id < options.users) this.user(id++, (shares[0] as [UserKind, number])[0]);
  }

  private user(id: number, kind: UserKind) {
    const next = this.next;
    const cityCount = this.catalog.cities.length;
    const city = FESTIVAL_CITY.includes(kind)
      ? 3 * int(next, 0, Math.floor((cityCount - 1) / 3))
      : int(next, 0, cityCount - 1);
    const centre = this.catalog.cities[city] as City;
    const user: WorldUser = { id, kind, city, truth: new Set(), ways: new Map() };
    this.users.push(user);
    const home = this.catalog.outsideBuildings(() => scatter(next, centre.latitude, centre.longitude, 7000));
    let work = this.catalog.outsideBuildings(() => scatter(next, centre.latitude, centre.longitude, 4000));
    let routine: { at: [number, number]; evening: boolean } | null = null;
    const life: Life = {
      ...this.scene,
      user,
      centre,
      home,
      shoot: () => {},
      busy: new Set(),
      away: new Set(),
    };
    if (kind === "resident" || kind === "worker") {
      const venue = pick(
        next,
        this.catalog.venuesIn(
          city,
          kind === "resident" ? ["stadium", "arena"] : ["stadium", "arena", "club", "theatre"],
        ),
      );
      // Anywhere between the building (its footprint and a street) and the edge of the radius, by area.
      const radius = radiusOf(venue, this.settings);
      const inner = Math.min(radius, FOOTPRINT_M[venue.kind] + 20);
      const at = atDistance(
        next,
        venue.latitude,
        venue.longitude,
        Math.sqrt(inner ** 2 + next() * (radius ** 2 - inner ** 2)),
      );
      if (kind === "resident") life.home = at;
      else work = at;
      routine = { at, evening: kind === "resident" };
    }
    // Tens of metres typical; a few percent of fixes a kilometre or more off.
    const sigma = 10 + 30 * next();
    const clock = kind === "clock-off" ? (next() < 0.5 ? -1 : 1) * int(next, 1, 4) * HOUR_MS : 0;
    life.shoot = (at, takenAtMs, origin = 0) => {
      let point = scatter(next, at[0], at[1], sigma);
      if (next() < 0.03) point = atDistance(next, point[0], point[1], int(next, 1000, 3000));
      this.photos.push({
        user: id,
        latitude: point[0],
        longitude: point[1],
        takenAtMs: takenAtMs + clock,
        origin,
      });
    };

    // A season ticket is one seat, game after game.
    const seats = new Map<number, [number, number]>();
    for (const event of this.attended(kind, city)) {
      const venue = this.catalog.venue(event.venueId);
      const seat = seats.get(venue.id) ?? seatIn(this.scene, venue);
      if (kind === "season-ticket" && venue.kind === "stadium") seats.set(venue.id, seat);
      attend(user, event, atEvent(this.scene, event, seat, life.shoot));
      life.busy.add(eventDay(life, event));
    }
    BEHAVIOURS[kind]?.(life);

    const wander = kind === "passer-by" ? 0.4 : 0.12;
    for (let day = 0; day < DAYS; day++) {
      if (life.away.has(day)) continue;
      if (routine !== null && next() < 0.25) {
        // Home on an evening, or work until early evening: where a venue's window is open.
        const hour = routine.evening ? 18 + 5.9 * next() : 9 + 10.5 * next();
        for (let k = int(next, 1, 3); k > 0; k--)
          life.shoot(routine.at, instant(centre, day, hour + k * 0.1));
      }
      if (next() > 0.75) continue;
      for (let k = 1 + Math.floor(-Math.log(1 - next()) * 2.5); k > 0; k--) {
        const where = next();
        if (where < 0.45) life.shoot(life.home, instant(centre, day, 7 + 17 * next()));
        else if (where < 1 - wander) life.shoot(work, instant(centre, day, 9 + 9.5 * next()));
        else
          life.shoot(
            scatter(next, centre.latitude, centre.longitude, 4000),
            instant(centre, day, 10 + 13 * next()),
          );
      }
    }
  }

  /** The events a user attends as an ordinary audience member: kind decides how many and where. */
  private attended(kind: UserKind, city: number): WorldEvent[] {
    const next = this.next;
    const chosen = new Set<WorldEvent>();
    const [low, high] = KIND_EVENTS[kind];
    const fromVenues = (venues: WorldVenue[], count: number) => {
      for (let i = 0; i < count && venues.length > 0; i++) {
        const list = this.catalog.eventsAt(pick(next, venues).id);
        if (list.length > 0) chosen.add(pick(next, list));
      }
    };
    const anyVenue = this.catalog.venuesIn(city, ["stadium", "arena", "club", "theatre"]);
    if (kind === "next-door") {
      const paired = anyVenue.filter((v) => v.neighbour !== null);
      fromVenues(paired, Math.round(int(next, low, high) * 0.8));
      fromVenues(anyVenue, int(next, 1, 4));
    } else {
      fromVenues(anyVenue, int(next, low, high));
    }
    if (kind === "season-ticket") {
      const team = pick(next, this.catalog.venuesIn(city, ["stadium"]));
      for (const game of this.catalog.eventsAt(team.id)) if (next() < 0.6) chosen.add(game);
    }
    if (kind === "festival") {
      const grounds = this.catalog.venuesIn(city, ["festival"]);
      for (const ground of grounds) {
        const days = this.catalog.eventsAt(ground.id);
        for (let f = 0; f < days.length; f += 3) {
          if (next() < 0.3) continue;
          for (const day of days.slice(f, f + 3)) if (next() < 0.8) chosen.add(day);
        }
      }
    }
    return [...chosen];
  }
}

export function generateWorld(options: WorldOptions, settings: MatchSettings): World {
  const next = random(options.seed);
  const catalog = new Catalog(next, options);
  const people = new People(next, catalog, settings, options);
  return {
    settings,
    kinds: Object.keys(MIX_SHARES[options.mix]) as UserKind[],
    venues: catalog.venues,
    events: catalog.events,
    users: people.users,
    photos: people.photos,
  };
}
