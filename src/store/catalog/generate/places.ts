import { cityMapping } from "city-timezones";
import { canonicalTimeZone } from "../localTime.ts";
import { type Random, WeightedChoice } from "./random.ts";
import { ADJECTIVES, LAST_NAMES, NOUNS, VENUE_KINDS, type VenueKind } from "./vocabulary.ts";

/** A venue of the synthetic catalog, with the facts the event schedule needs. */
export type GeneratedVenue = {
  id: number;
  kind: VenueKind;
  name: string;
  city: string;
  region: string | null;
  country: string;
  latitude: number;
  longitude: number;
  timezone: string;
  radiusM: number;
};

export type City = {
  name: string;
  region: string | null;
  country: string;
  lat: number;
  lng: number;
  zone: string;
  population: number;
};

/** Cities big enough to have a live scene; weighting by population puts most venues in large cities. */
const MIN_POPULATION = 150_000;
const METRES_PER_DEGREE = 111_320;

let cachedCities: { cities: City[]; choice: WeightedChoice<City> } | null = null;

/**
 * The cities venues are placed in. The data set has a few entries without a usable country code
 * (Kosovo and Somaliland carry -99 or "") or zone; they are left out rather than written as bad lines.
 */
export function catalogCities(): { cities: City[]; choice: WeightedChoice<City> } {
  if (cachedCities !== null) return cachedCities;
  const list: City[] = [];
  const weights: number[] = [];
  for (const entry of cityMapping) {
    const zone = typeof entry.timezone === "string" ? canonicalTimeZone(entry.timezone) : null;
    const country = typeof entry.iso2 === "string" && /^[A-Z]{2}$/.test(entry.iso2) ? entry.iso2 : null;
    if (entry.pop < MIN_POPULATION || zone === null || country === null || typeof entry.city !== "string")
      continue;
    list.push({
      name: entry.city,
      region: typeof entry.province === "string" && entry.province !== "" ? entry.province : null,
      country,
      lat: entry.lat,
      lng: entry.lng,
      zone,
      population: entry.pop,
    });
    weights.push(entry.pop);
  }
  cachedCities = { cities: list, choice: new WeightedChoice(list, weights) };
  return cachedCities;
}

/** The largest cities of a country, biggest first: where a league's visiting teams come from. */
export function largestCities(country: string, count: number): string[] {
  return catalogCities()
    .cities.filter((c) => c.country === country)
    .sort((a, b) => b.population - a.population || a.name.localeCompare(b.name))
    .slice(0, count)
    .map((c) => c.name);
}

function venueName(random: Random, kind: VenueKind, city: string): string {
  const adjective = random.pick(ADJECTIVES);
  const noun = random.pick(NOUNS);
  const person = random.pick(LAST_NAMES);
  const options: Record<VenueKind, string[]> = {
    club: [`${adjective} ${noun} Club`, `The ${noun} Room`, `Club ${adjective}`],
    theater: [`${city} Theatre`, `${person} Theater`, `Royal ${adjective} Theatre`],
    hall: [`${city} Music Hall`, `${person} Hall`, `The ${adjective} Ballroom`],
    arena: [`${city} Arena`, `${adjective} Bank Arena`, `${person} Center`],
    stadium: [`${city} Stadium`, `${person} Stadium`, `${adjective} Park`],
    festival: [`${city} Festival Grounds`, `${noun} Fields`, `${adjective} Meadows`],
  };
  return random.pick(options[kind]);
}

/** Rounds to 6 decimals (about 10 cm), as a catalog would store coordinates. */
function coordinate(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Venues spread over real cities, each carrying its city's IANA zone and a radius that fits its size. */
export function generateVenues(random: Random, count: number): GeneratedVenue[] {
  const { choice: cityChoice } = catalogCities();
  const kindChoice = new WeightedChoice(
    VENUE_KINDS,
    VENUE_KINDS.map((k) => k.share),
  );
  const venues: GeneratedVenue[] = [];
  for (let id = 1; id <= count; id++) {
    const city = cityChoice.draw(random);
    const kind = kindChoice.draw(random);
    // Festival grounds sit at the edge of town; everything else within about 8 km of the centre.
    const distance = Math.sqrt(random.float()) * (kind.kind === "festival" ? 20_000 : 8_000);
    const bearing = random.float() * 2 * Math.PI;
    const latitude = city.lat + (distance * Math.cos(bearing)) / METRES_PER_DEGREE;
    const longitude =
      city.lng + (distance * Math.sin(bearing)) / (METRES_PER_DEGREE * Math.cos((city.lat * Math.PI) / 180));
    venues.push({
      id,
      kind: kind.kind,
      name: venueName(random, kind.kind, city.name),
      city: city.name,
      region: city.region,
      country: city.country,
      latitude: coordinate(Math.max(-90, Math.min(90, latitude))),
      longitude: coordinate(((((longitude + 180) % 360) + 360) % 360) - 180),
      timezone: city.zone,
      radiusM: random.int(kind.radius[0], kind.radius[1]),
    });
  }
  return venues;
}
