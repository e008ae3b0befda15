import { type GeneratedVenue, largestCities } from "./places.ts";
import { type Random, WeightedChoice } from "./random.ts";
import {
  ADJECTIVES,
  FIRST_NAMES,
  GENRES,
  INDOOR_SPORTS,
  LAST_NAMES,
  LEAGUES,
  NOUNS,
  type Sport,
  TEAM_NAMES,
} from "./vocabulary.ts";

/** Visiting teams a league gets per country it is played in (its largest cities). */
const VISITING_TEAMS_PER_COUNTRY = 8;

export type GeneratedPerformer = { id: number; name: string; category: string; imageUrl: string | null };

/** A league played at a venue: its home teams and the league's full list of teams (their opponents). */
export type HomeLeague = { sport: Sport; home: number[]; league: number[] };

export type Roster = {
  performers: GeneratedPerformer[];
  /** Performer ids per genre, most popular first (events draw from the front more often). */
  byGenre: Map<string, number[]>;
  comedians: number[];
  /** Venue id -> the league whose home games it hosts. */
  homeLeagues: Map<number, HomeLeague>;
};

function actName(random: Random, genre: string): string {
  const first = random.pick(FIRST_NAMES);
  const last = random.pick(LAST_NAMES);
  const adjective = random.pick(ADJECTIVES);
  const noun = random.pick(NOUNS);
  if (genre === "classical")
    return random.pick([`${last} String Quartet`, `${first} ${last}`, `${adjective} Sinfonietta`]);
  if (genre === "jazz")
    return random.pick([`${first} ${last} Trio`, `${first} ${last} Quartet`, `${first} ${last}`]);
  if (genre === "electronic") return random.pick([`DJ ${first}`, `${adjective} ${noun}`, `${first} ${last}`]);
  return random.pick([
    `The ${adjective} ${noun}`,
    `${adjective} ${noun}`,
    `${first} ${last}`,
    `${first} & the ${noun}`,
  ]);
}

function teamName(random: Random, sport: Sport, city: string, taken: Set<string>): string {
  for (let attempt = 0; ; attempt++) {
    const word = random.pick(TEAM_NAMES[sport]);
    const base = word === "FC" ? `FC ${city}` : `${city} ${word}`;
    // A city with more teams than names in the list gets numbered clubs, as real leagues have.
    const name = attempt < 8 ? base : `${base} ${attempt - 6}`;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
  }
}

function imageUrl(random: Random, id: number): string | null {
  return random.chance(0.75) ? `https://images.example.com/performers/${id}.jpg` : null;
}

/** Music acts by genre, comedians, and teams for the leagues of the countries that have sports venues. */
export function generateRoster(random: Random, events: number, venues: readonly GeneratedVenue[]): Roster {
  const performers: GeneratedPerformer[] = [];
  const byGenre = new Map<string, number[]>(GENRES.map((g) => [g.genre, []]));
  const genreChoice = new WeightedChoice(
    GENRES,
    GENRES.map((g) => g.share),
  );
  const acts = Math.max(40, Math.round(events / 25));
  for (let i = 0; i < acts; i++) {
    const id = performers.length + 1;
    const { genre } = genreChoice.draw(random);
    performers.push({ id, name: actName(random, genre), category: genre, imageUrl: imageUrl(random, id) });
    byGenre.get(genre)?.push(id);
  }
  const comedians: number[] = [];
  const comedianCount = Math.max(5, Math.round(events / 400));
  for (let i = 0; i < comedianCount; i++) {
    const id = performers.length + 1;
    const name = `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`;
    performers.push({ id, name, category: "comedy", imageUrl: imageUrl(random, id) });
    comedians.push(id);
  }
  const homeLeagues = new Map<number, HomeLeague>();
  const leagues = new Map<string, { ids: number[]; names: Set<string> }>();
  const addTeam = (
    league: (typeof LEAGUES)[number],
    city: string,
    teams: { ids: number[]; names: Set<string> },
  ) => {
    const id = performers.length + 1;
    performers.push({
      id,
      name: teamName(random, league.sport, city, teams.names),
      category: league.league,
      imageUrl: imageUrl(random, id),
    });
    teams.ids.push(id);
    return id;
  };
  for (const venue of venues) {
    if (venue.kind !== "arena" && venue.kind !== "stadium") continue;
    const fitting = LEAGUES.filter(
      (l) =>
        l.countries.includes(venue.country) && INDOOR_SPORTS.includes(l.sport) === (venue.kind === "arena"),
    );
    if (fitting.length === 0 || !random.chance(0.7)) continue;
    const league = random.pick(fitting);
    let teams = leagues.get(league.league);
    if (teams === undefined) {
      // A league needs opponents even when the catalog has one of its venues: visiting teams from
      // the league's largest cities.
      teams = { ids: [], names: new Set<string>() };
      leagues.set(league.league, teams);
      for (const country of league.countries) {
        for (const city of largestCities(country, VISITING_TEAMS_PER_COUNTRY)) addTeam(league, city, teams);
      }
    }
    const home = [addTeam(league, venue.city, teams)];
    if (random.chance(0.2)) home.push(addTeam(league, venue.city, teams));
    homeLeagues.set(venue.id, { sport: league.sport, home, league: teams.ids });
  }
  return { performers, byGenre, comedians, homeLeagues };
}
