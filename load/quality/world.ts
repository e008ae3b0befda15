import { EARTH_RADIUS_M, haversineMeters } from "../../src/shards/geo.ts";
import type { IndexEvent, IndexVenue, MatchQuery, MatchSettings } from "../../src/shards/matcher.ts";
import { random } from "../bench-match-catalog.ts";

/**
 * Simulated camera rolls with known truth, for measuring how right a user's history is. A year of
 * events in a few cities, and users of the kinds that make the matching rule go wrong: people at
 * events (photos over the show, only at its start, or from the queue at the radius's edge), people
 * living or working inside a venue's radius, passers-by, shows at neighbouring venues at the same
 * time, multi-day festivals, season-ticket holders, phones whose clock is off by hours, and GPS error
 * on every photo. Deterministic for a seed.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const YEAR_START = Date.UTC(2025, 0, 1);
const DAYS = 365;

export const USER_KINDS = [
  "attendee",
  "next-door",
  "festival",
  "season-ticket",
  "clock-off",
  "resident",
  "worker",
  "passer-by",
] as const;
export type UserKind = (typeof USER_KINDS)[number];

/** Kinds whose photos are mostly taken at the events they attend; the rest mostly happen to be near venues. */
export const ATTENDING_KINDS: readonly UserKind[] = [
  "attendee",
  "next-door",
  "festival",
  "season-ticket",
  "clock-off",
];

/** Share of users of each kind (sums to 1). */
const KIND_SHARES: Record<UserKind, number> = {
  attendee: 0.25,
  "next-door": 0.1,
  festival: 0.05,
  "season-ticket": 0.05,
  "clock-off": 0.05,
  resident: 0.15,
  worker: 0.1,
  "passer-by": 0.25,
};

type VenueKind = "stadium" | "arena" | "club" | "theatre" | "festival";

export type WorldVenue = IndexVenue & { kind: VenueKind; city: number; neighbour: number | null };
export type WorldEvent = IndexEvent;

/** `origin`: the event the photo was taken at, 0 for every other photo. */
export type Photo = MatchQuery & { user: number; origin: number };

export type WorldUser = {
  id: number;
  kind: UserKind;
  city: number;
  /** Licensed events the user was at: what a right history shows. */
  truth: Set<number>;
};

export type World = {
  settings: MatchSettings;
  venues: WorldVenue[];
  events: WorldEvent[];
  users: WorldUser[];
  photos: Photo[];
};

export type WorldOptions = { seed: number; users: number; cities: number; venuesPerCity: number };

type Rng = () => number;

function gaussian(next: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

/** The point `northM`, `eastM` metres from a place (flat-earth: fine over a few kilometres). */
function offset(latitude: number, longitude: number, northM: number, eastM: number): [number, number] {
  const lat = latitude + (northM / EARTH_RADIUS_M) * (180 / Math.PI);
  const lng = longitude + (eastM / (EARTH_RADIUS_M * Math.cos((latitude * Math.PI) / 180))) * (180 / Math.PI);
  return [lat, lng];
}

/** A point at a given distance and a random bearing. */
function atDistance(next: Rng, latitude: number, longitude: number, metres: number): [number, number] {
  const bearing = next() * 2 * Math.PI;
  return offset(latitude, longitude, metres * Math.cos(bearing), metres * Math.sin(bearing));
}

function scatter(next: Rng, latitude: number, longitude: number, sigmaM: number): [number, number] {
  return offset(latitude, longitude, gaussian(next) * sigmaM, gaussian(next) * sigmaM);
}

const int = (next: Rng, low: number, high: number) => low + Math.floor(next() * (high - low + 1));
const pick = <T>(next: Rng, list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;

/** Distinct days of the year, sorted. */
function days(next: Rng, count: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, DAYS)) chosen.add(Math.floor(next() * DAYS));
  return [...chosen].sort((a, b) => a - b);
}

type City = { latitude: number; longitude: number; utcOffsetHours: number };

/** A local wall-clock time in a city as an instant. */
const instant = (city: City, day: number, localHour: number) =>
  YEAR_START + day * DAY_MS + Math.round((localHour - city.utcOffsetHours) * HOUR_MS);

/**
 * Metres from a venue's point to the edge of its stands or hall: where its audience sits. Homes and
 * workplaces are never inside it.
 */
const FOOTPRINT_M: Record<VenueKind, number> = {
  stadium: 130,
  arena: 70,
  club: 25,
  theatre: 30,
  festival: 250,
};

function radiusOf(venue: WorldVenue, settings: MatchSettings): number {
  return venue.radiusM ?? settings.radiusM;
}

class Catalog {
  readonly venues: WorldVenue[] = [];
  readonly events: WorldEvent[] = [];
  readonly cities: City[] = [];

  constructor(
    private readonly next: Rng,
    options: WorldOptions,
  ) {
    for (let c = 0; c < options.cities; c++) {
      const longitude = -150 + next() * 300;
      this.cities.push({
        latitude: -40 + next() * 95,
        longitude,
        utcOffsetHours: Math.round(longitude / 15),
      });
    }
    this.cities.forEach((city, c) => {
      this.cityVenues(c, city, options.venuesPerCity);
    });
  }

  private addVenue(kind: VenueKind, city: number, at: [number, number], radiusM: number | null) {
    const venue: WorldVenue = {
      id: this.venues.length + 1,
      latitude: at[0],
      longitude: at[1],
      radiusM,
      kind,
      city,
      neighbour: null,
    };
    this.venues.push(venue);
    return venue;
  }

  private addEvent(venue: WorldVenue, start: number, end: number | null): WorldEvent {
    const event: WorldEvent = {
      id: this.events.length + 1,
      venueId: venue.id,
      startsAtMs: start,
      endsAtMs: end,
      licensed: this.next() < 0.95,
    };
    this.events.push(event);
    return event;
  }

  /**
   * Two stadiums, a festival ground (two three-day festivals) in every third city, theatres, arenas
   * and clubs, and three pairs of an arena or club with a club 250-700 m away that has a show on most
   * of the same nights, starting up to an hour earlier or 90 minutes later.
   */
  private cityVenues(c: number, city: City, count: number) {
    const next = this.next;
    const place = () => scatter(next, city.latitude, city.longitude, 3000);
    const plan: VenueKind[] = ["stadium", "stadium"];
    if (c % 3 === 0) plan.push("festival");
    while (plan.length < count)
      plan.push(plan.length % 3 === 0 ? "theatre" : plan.length % 3 === 1 ? "arena" : "club");
    let pairs = 3;
    for (let i = 0; i < plan.length; i++) {
      const kind = plan[i] as VenueKind;
      if (kind === "stadium") this.stadium(this.addVenue(kind, c, place(), int(next, 800, 1400)), city);
      else if (kind === "festival") this.festival(this.addVenue(kind, c, place(), 1000), city);
      else if (kind === "theatre") this.theatre(this.addVenue(kind, c, place(), int(next, 150, 350)), city);
      else {
        const radius = kind === "arena" ? null : next() < 0.5 ? null : int(next, 250, 500);
        const first = this.addVenue(kind, c, place(), radius);
        const nights = this.shows(first, city, kind === "arena" ? 110 : 140);
        if (pairs > 0 && i + 1 < plan.length) {
          pairs--;
          i++;
          const at = atDistance(next, first.latitude, first.longitude, int(next, 250, 700));
          const second = this.addVenue("club", c, at, next() < 0.5 ? null : int(next, 250, 500));
          first.neighbour = second.id;
          second.neighbour = first.id;
          this.pairedShows(second, city, nights);
        }
      }
    }
  }

  private stadium(venue: WorldVenue, city: City) {
    for (const day of days(this.next, 70)) {
      const start = instant(city, day, this.next() < 0.3 ? 16 : 19 + (this.next() < 0.5 ? 0.5 : 0));
      this.addEvent(venue, start, this.next() < 0.6 ? start + 3 * HOUR_MS : null);
    }
  }

  private festival(venue: WorldVenue, city: City) {
    for (const first of [int(this.next, 150, 170), int(this.next, 200, 230)]) {
      for (let d = 0; d < 3; d++) {
        const start = instant(city, first + d, 12);
        this.addEvent(venue, start, start + 11 * HOUR_MS);
      }
    }
  }

  private theatre(venue: WorldVenue, city: City) {
    for (const day of days(this.next, 170)) {
      const start = instant(city, day, 19.5);
      this.addEvent(venue, start, start + 150 * MINUTE_MS);
    }
  }

  /** Evening shows at a club or arena; returns (day, start) of each, for a neighbour's schedule. */
  private shows(venue: WorldVenue, city: City, count: number): [number, number][] {
    const nights: [number, number][] = [];
    for (const day of days(this.next, count)) {
      const start = instant(city, day, 19 + 0.5 * int(this.next, 0, 4));
      const end = this.next() < 0.5 ? start + int(this.next, 4, 7) * 30 * MINUTE_MS : null;
      this.addEvent(venue, start, end);
      nights.push([day, start]);
    }
    return nights;
  }

  private pairedShows(venue: WorldVenue, city: City, neighbourNights: [number, number][]) {
    const taken = new Set<number>();
    for (const [day, start] of neighbourNights) {
      if (this.next() >= 0.7) continue;
      taken.add(day);
      const mine = start + int(this.next, -2, 3) * 30 * MINUTE_MS;
      this.addEvent(venue, mine, this.next() < 0.5 ? mine + int(this.next, 4, 6) * 30 * MINUTE_MS : null);
    }
    for (const day of days(this.next, 40)) {
      if (taken.has(day)) continue;
      const start = instant(city, day, 20);
      this.addEvent(venue, start, start + 3 * HOUR_MS);
    }
  }
}

const KIND_EVENTS: Record<UserKind, [number, number]> = {
  attendee: [8, 30],
  "next-door": [8, 25],
  festival: [2, 8],
  "season-ticket": [0, 4],
  "clock-off": [8, 20],
  resident: [2, 6],
  worker: [2, 6],
  "passer-by": [0, 3],
};

class People {
  readonly users: WorldUser[] = [];
  readonly photos: Photo[] = [];
  private readonly byVenue = new Map<number, WorldEvent[]>();
  private readonly venueById = new Map<number, WorldVenue>();

  constructor(
    private readonly next: Rng,
    private readonly catalog: Catalog,
    private readonly settings: MatchSettings,
    count: number,
  ) {
    for (const venue of catalog.venues) this.venueById.set(venue.id, venue);
    for (const event of catalog.events) {
      const list = this.byVenue.get(event.venueId) ?? [];
      list.push(event);
      this.byVenue.set(event.venueId, list);
    }
    let id = 0;
    for (const kind of USER_KINDS) {
      const users = Math.round(count * KIND_SHARES[kind]);
      for (let i = 0; i < users && id < count; i++) this.user(id++, kind);
    }
    while (id < count) this.user(id++, "attendee");
  }

  private venue(id: number): WorldVenue {
    return this.venueById.get(id) as WorldVenue;
  }

  private cityVenues(city: number, kinds: readonly VenueKind[]): WorldVenue[] {
    return this.catalog.venues.filter((v) => v.city === city && kinds.includes(v.kind));
  }

  private user(id: number, kind: UserKind) {
    const next = this.next;
    const cityCount = this.catalog.cities.length;
    // Festival grounds are in every third city.
    const city =
      kind === "festival" ? 3 * int(next, 0, Math.floor((cityCount - 1) / 3)) : int(next, 0, cityCount - 1);
    const centre = this.catalog.cities[city] as City;
    const user: WorldUser = { id, kind, city, truth: new Set() };
    this.users.push(user);
    let home = this.outsideBuildings(() => scatter(next, centre.latitude, centre.longitude, 7000));
    let work = this.outsideBuildings(() => scatter(next, centre.latitude, centre.longitude, 4000));
    let routine: { at: [number, number]; evening: boolean } | null = null;
    if (kind === "resident" || kind === "worker") {
      const venue = pick(
        next,
        this.cityVenues(
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
      if (kind === "resident") home = at;
      else work = at;
      routine = { at, evening: kind === "resident" };
    }
    // Tens of metres typical; a few percent of fixes a kilometre or more off.
    const sigma = 10 + 30 * next();
    const clock = kind === "clock-off" ? (next() < 0.5 ? -1 : 1) * int(next, 1, 4) * HOUR_MS : 0;
    const shoot = (at: [number, number], takenAtMs: number, origin = 0) => {
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
      if (event.licensed) user.truth.add(event.id);
      const venue = this.venue(event.venueId);
      const seat = seats.get(venue.id) ?? this.seat(venue);
      if (kind === "season-ticket" && venue.kind === "stadium") seats.set(venue.id, seat);
      this.atEvent(event, seat, shoot);
    }

    const wander = kind === "passer-by" ? 0.4 : 0.12;
    for (let day = 0; day < DAYS; day++) {
      if (routine !== null && next() < 0.25) {
        // Home on an evening, or work until early evening: where a venue's window is open.
        const hour = routine.evening ? 18 + 5.9 * next() : 9 + 10.5 * next();
        for (let k = int(next, 1, 3); k > 0; k--) shoot(routine.at, instant(centre, day, hour + k * 0.1));
      }
      if (next() > 0.75) continue;
      for (let k = 1 + Math.floor(-Math.log(1 - next()) * 2.5); k > 0; k--) {
        const where = next();
        if (where < 0.45) shoot(home, instant(centre, day, 7 + 17 * next()));
        else if (where < 1 - wander) shoot(work, instant(centre, day, 9 + 9.5 * next()));
        else
          shoot(
            scatter(next, centre.latitude, centre.longitude, 4000),
            instant(centre, day, 10 + 13 * next()),
          );
      }
    }
  }

  /** The events a user goes to: kind decides how many and where. */
  private attended(kind: UserKind, city: number): WorldEvent[] {
    const next = this.next;
    const chosen = new Set<WorldEvent>();
    const [low, high] = KIND_EVENTS[kind];
    const fromVenues = (venues: WorldVenue[], count: number) => {
      for (let i = 0; i < count && venues.length > 0; i++) {
        const list = this.byVenue.get(pick(next, venues).id) ?? [];
        if (list.length > 0) chosen.add(pick(next, list));
      }
    };
    const anyVenue = this.cityVenues(city, ["stadium", "arena", "club", "theatre"]);
    if (kind === "next-door") {
      const paired = anyVenue.filter((v) => v.neighbour !== null);
      fromVenues(paired, Math.round(int(next, low, high) * 0.8));
      fromVenues(anyVenue, int(next, 1, 4));
    } else {
      fromVenues(anyVenue, int(next, low, high));
    }
    if (kind === "season-ticket") {
      const team = pick(next, this.cityVenues(city, ["stadium"]));
      for (const game of this.byVenue.get(team.id) ?? []) if (next() < 0.6) chosen.add(game);
    }
    if (kind === "festival") {
      const grounds = this.cityVenues(city, ["festival"]);
      for (const ground of grounds) {
        const days = this.byVenue.get(ground.id) ?? [];
        for (let f = 0; f < days.length; f += 3) {
          if (next() < 0.3) continue;
          for (const day of days.slice(f, f + 3)) if (next() < 0.8) chosen.add(day);
        }
      }
    }
    return [...chosen];
  }

  /** A place in a venue's stands or hall, uniform by area. */
  private seat(venue: WorldVenue): [number, number] {
    return atDistance(
      this.next,
      venue.latitude,
      venue.longitude,
      FOOTPRINT_M[venue.kind] * Math.sqrt(this.next()),
    );
  }

  private outsideBuildings(place: () => [number, number]): [number, number] {
    for (;;) {
      const at = place();
      const inside = this.catalog.venues.some(
        (v) =>
          Math.abs(v.latitude - at[0]) < 0.01 &&
          haversineMeters(at[0], at[1], v.latitude, v.longitude) < FOOTPRINT_M[v.kind] + 20,
      );
      if (!inside) return at;
    }
  }

  /**
   * Photos at one event, from the user's seat and a few metres around it: spread over the show, only
   * around its start, or from the queue at the edge of the radius before the start, then a few inside.
   */
  private atEvent(
    event: WorldEvent,
    seatAt: [number, number],
    take: (at: [number, number], takenAtMs: number, origin: number) => void,
  ) {
    const shoot = (at: [number, number], takenAtMs: number) => take(at, takenAtMs, event.id);
    const next = this.next;
    const venue = this.venue(event.venueId);
    const radius = radiusOf(venue, this.settings);
    const start = event.startsAtMs;
    const end = event.endsAtMs ?? start + this.settings.defaultDurationMinutes * MINUTE_MS;
    const seat = () => scatter(next, seatAt[0], seatAt[1], 10);
    const pattern = next();
    if (pattern < 0.55) {
      const count = 1 + Math.floor(-Math.log(1 - next()) * 6);
      for (let k = 0; k < Math.min(count, 40); k++) shoot(seat(), start + next() * (end - start));
    } else if (pattern < 0.8) {
      for (let k = int(next, 1, 4); k > 0; k--)
        shoot(seat(), start - 20 * MINUTE_MS + next() * 50 * MINUTE_MS);
    } else {
      const queue = atDistance(next, venue.latitude, venue.longitude, radius * (0.75 + 0.25 * next()));
      for (let k = int(next, 1, 3); k > 0; k--) shoot(queue, start - (10 + 65 * next()) * MINUTE_MS);
      for (let k = int(next, 0, 5); k > 0; k--) shoot(seat(), start + next() * (end - start));
    }
  }
}

export function generateWorld(options: WorldOptions, settings: MatchSettings): World {
  const next = random(options.seed);
  const catalog = new Catalog(next, options);
  const people = new People(next, catalog, settings, options.users);
  return {
    settings,
    venues: catalog.venues,
    events: catalog.events,
    users: people.users,
    photos: people.photos,
  };
}
