import { haversineMeters } from "../../src/shards/geo.ts";
import {
  atDistance,
  type City,
  DAYS,
  dayOf,
  days,
  FOOTPRINT_M,
  HOUR_MS,
  instant,
  int,
  MINUTE_MS,
  type Rng,
  scatter,
} from "./worldGeometry.ts";
import type { VenueKind, WorldEvent, WorldOptions, WorldVenue } from "./worldModel.ts";

export class Catalog {
  readonly venues: WorldVenue[] = [];
  readonly events: WorldEvent[] = [];
  readonly cities: City[] = [];
  private readonly byVenue = new Map<number, WorldEvent[]>();
  private readonly venueById = new Map<number, WorldVenue>();
  private byCityDay: WorldEvent[][][] | null = null;

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
    for (const venue of this.venues) this.venueById.set(venue.id, venue);
    for (const event of this.events) {
      const list = this.byVenue.get(event.venueId) ?? [];
      list.push(event);
      this.byVenue.set(event.venueId, list);
    }
  }

  venue(id: number): WorldVenue {
    return this.venueById.get(id) as WorldVenue;
  }

  /** In the order they were added, which keeps each festival's three days together. */
  eventsAt(venueId: number): WorldEvent[] {
    return this.byVenue.get(venueId) ?? [];
  }

  venuesIn(city: number, kinds: readonly VenueKind[]): WorldVenue[] {
    return this.venues.filter((v) => v.city === city && kinds.includes(v.kind));
  }

  /** The city an event is in. */
  cityOf(event: WorldEvent): City {
    return this.cities[this.venue(event.venueId).city] as City;
  }

  /** Every event starting on a local day in a city, by start. */
  eventsOn(city: number, day: number): WorldEvent[] {
    if (this.byCityDay === null) {
      const index = this.cities.map(() => Array.from({ length: DAYS }, (): WorldEvent[] => []));
      for (const event of this.events) {
        const c = this.venue(event.venueId).city;
        index[c]?.[dayOf(this.cities[c] as City, event.startsAtMs)]?.push(event);
      }
      for (const byDay of index) for (const list of byDay) list.sort((a, b) => a.startsAtMs - b.startsAtMs);
      this.byCityDay = index;
    }
    return this.byCityDay[city]?.[day] ?? [];
  }

  /** Whether a place is in a venue's stands or hall, or the street around it. */
  inBuilding(at: [number, number]): boolean {
    return this.venues.some(
      (v) =>
        Math.abs(v.latitude - at[0]) < 0.01 &&
        haversineMeters(at[0], at[1], v.latitude, v.longitude) < FOOTPRINT_M[v.kind] + 20,
    );
  }

  /** The first place from `place` that is in no building: homes, workplaces, hotels, bars. */
  outsideBuildings(place: () => [number, number]): [number, number] {
    for (;;) {
      const at = place();
      if (!this.inBuilding(at)) return at;
    }
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
