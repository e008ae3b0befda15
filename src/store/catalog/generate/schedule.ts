import type { Roster } from "./performers.ts";
import type { GeneratedVenue } from "./places.ts";
import { type Random, WeightedChoice } from "./random.ts";
import {
  COMEDY_SHOWS,
  FESTIVAL_THEMES,
  GENRES,
  SPORT_START_TIMES,
  TOUR_WORDS,
  VENUE_KINDS,
  type VenueKind,
} from "./vocabulary.ts";

/**
 * Draws events: a venue (busier kinds more often), a day between FIRST_YEAR and LAST_YEAR leaning to
 * weekends, and a programme that fits the venue: concerts, comedy, home games of the venue's league,
 * multi-day festivals on festival grounds. Times are local wall-clock times at the venue.
 */

export const FIRST_YEAR = 2021;
export const LAST_YEAR = 2027;

export type GeneratedEvent = {
  type: "event";
  id: number;
  name: string;
  venue_id: number;
  starts_at_local: string;
  ends_at_local: string | null;
  licensed: boolean;
  performers: { id: number; is_headliner: boolean | null }[];
};

type Day = { date: string; weekday: number; year: number };
type Programme = {
  name: string;
  start: number;
  end: number | null;
  performers: GeneratedEvent["performers"];
};

const MINUTES_PER_DAY = 1440;
/** A few percent of events may not be redistributed; the matcher must still report their venue. */
const LICENSED_SHARE = 0.97;

const START_TIMES: Record<VenueKind, readonly string[]> = {
  club: ["20:00", "21:00", "22:00", "23:00"],
  theater: ["19:00", "19:30", "20:00"],
  hall: ["19:30", "20:00", "20:30"],
  arena: ["19:00", "19:30", "20:00"],
  stadium: ["18:30", "19:00", "19:30"],
  festival: ["12:00", "13:00", "14:00", "15:00", "16:00"],
};

function minutesOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

function calendar(): Day[] {
  const days: Day[] = [];
  // Ten spare days past the range so festivals and late shows may end after the last start day.
  const end = Date.UTC(LAST_YEAR, 11, 31) + 10 * 86_400_000;
  for (let ms = Date.UTC(FIRST_YEAR, 0, 1); ms <= end; ms += 86_400_000) {
    const date = new Date(ms);
    days.push({
      date: date.toISOString().slice(0, 10),
      weekday: date.getUTCDay(),
      year: date.getUTCFullYear(),
    });
  }
  return days;
}

function pad(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

export class Schedule {
  private readonly days = calendar();
  private readonly lastStartDay = this.days.length - 11;
  private readonly venueChoice: WeightedChoice<GeneratedVenue>;
  private readonly genreChoices = new Map<VenueKind, WeightedChoice<string>>();
  private readonly names: string[] = [];

  constructor(
    private readonly random: Random,
    venues: readonly GeneratedVenue[],
    private readonly roster: Roster,
  ) {
    const rate = new Map(VENUE_KINDS.map((k) => [k.kind, k.eventRate]));
    this.venueChoice = new WeightedChoice(
      venues,
      venues.map((v) => rate.get(v.kind) ?? 1),
    );
    for (const { kind } of VENUE_KINDS) {
      const fitting = GENRES.filter(
        (g) => g.venues.includes(kind) && (roster.byGenre.get(g.genre)?.length ?? 0) > 0,
      );
      const genres = fitting.length > 0 ? fitting : GENRES;
      this.genreChoices.set(
        kind,
        new WeightedChoice(
          genres.map((g) => g.genre),
          genres.map((g) => g.share),
        ),
      );
    }
    for (const performer of roster.performers) this.names[performer.id] = performer.name;
  }

  event(id: number): GeneratedEvent {
    const random = this.random;
    const venue = this.venueChoice.draw(random);
    let day = random.int(0, this.lastStartDay);
    // Weekends sell: an early-week date is redrawn once half the time.
    if ((this.days[day]?.weekday ?? 0) <= 3 && random.chance(0.5)) day = random.int(0, this.lastStartDay);
    const programme = this.programme(venue, day);
    return {
      type: "event",
      id,
      name: programme.name,
      venue_id: venue.id,
      starts_at_local: this.local(day, programme.start),
      ends_at_local: programme.end === null ? null : this.local(day, programme.end),
      licensed: random.chance(LICENSED_SHARE),
      performers: programme.performers,
    };
  }

  /** `minutes` counts from midnight of `day` and may run into the following days. */
  private local(day: number, minutes: number): string {
    const date = this.days[day + Math.floor(minutes / MINUTES_PER_DAY)]?.date;
    const inDay = minutes % MINUTES_PER_DAY;
    return `${date}T${pad(Math.floor(inDay / 60))}:${pad(inDay % 60)}:00`;
  }

  private programme(venue: GeneratedVenue, day: number): Programme {
    const random = this.random;
    if (venue.kind === "festival") return this.festival(venue, day);
    const league = this.roster.homeLeagues.get(venue.id);
    if (
      league !== undefined &&
      league.league.length > 1 &&
      random.chance(venue.kind === "stadium" ? 0.7 : 0.5)
    ) {
      const home = random.pick(league.home);
      let away = random.pick(league.league);
      while (away === home) away = random.pick(league.league);
      return {
        name: `${this.name(home)} vs ${this.name(away)}`,
        start: minutesOf(random.pick(SPORT_START_TIMES[league.sport])),
        end: null,
        performers: [
          { id: home, is_headliner: null },
          { id: away, is_headliner: null },
        ],
      };
    }
    const comedyShare = venue.kind === "theater" ? 0.4 : venue.kind === "club" ? 0.15 : 0;
    if (random.chance(comedyShare)) return this.comedy(venue);
    return this.concert(venue);
  }

  private concert(venue: GeneratedVenue): Programme {
    const random = this.random;
    const acts = this.acts(this.genreChoices.get(venue.kind)?.draw(random) ?? "rock");
    const headliner = acts[random.skewedIndex(acts.length)] ?? 1;
    const performers: Programme["performers"] = [{ id: headliner, is_headliner: true }];
    const openers = random.pick([0, 0, 1, 1, 1, 2, 2, 3]);
    for (let attempt = 0; performers.length <= openers && attempt < 10; attempt++) {
      const opener = random.pick(acts);
      if (!performers.some((p) => p.id === opener)) performers.push({ id: opener, is_headliner: false });
    }
    const start = minutesOf(random.pick(START_TIMES[venue.kind]));
    const hours = venue.kind === "club" ? random.int(12, 20) : random.int(10, 14);
    const style = random.int(0, 9);
    const second = performers[1];
    const name =
      style < 3
        ? `${this.name(headliner)}: ${random.pick(TOUR_WORDS)} Tour`
        : style < 5 && second !== undefined
          ? `${this.name(headliner)} with ${this.name(second.id)}`
          : this.name(headliner);
    // Four in ten concerts publish an end time (in quarter hours); the rest get the default duration.
    return { name, start, end: random.chance(0.4) ? start + hours * 15 : null, performers };
  }

  private comedy(venue: GeneratedVenue): Programme {
    const random = this.random;
    const comedians = this.roster.comedians;
    const headliner = comedians[random.skewedIndex(comedians.length)] ?? 1;
    const performers: Programme["performers"] = [{ id: headliner, is_headliner: true }];
    const opener = random.pick(comedians);
    if (opener !== headliner && random.chance(0.3)) performers.push({ id: opener, is_headliner: false });
    const start = minutesOf(random.pick(venue.kind === "club" ? ["19:00", "21:30"] : ["19:30", "20:00"]));
    return { name: `${this.name(headliner)}: ${random.pick(COMEDY_SHOWS)}`, start, end: null, performers };
  }

  private festival(venue: GeneratedVenue, day: number): Programme {
    const random = this.random;
    const days = random.int(1, 4);
    const count = random.int(6, 14);
    const headliners = random.int(2, 3);
    const performers: Programme["performers"] = [];
    while (performers.length < count) {
      const acts = this.acts(random.pick(GENRES).genre);
      const id =
        acts[
          performers.length < headliners ? random.skewedIndex(acts.length) : random.int(0, acts.length - 1)
        ];
      if (id !== undefined && !performers.some((p) => p.id === id)) {
        performers.push({ id, is_headliner: performers.length < headliners });
      }
    }
    const theme = FESTIVAL_THEMES[venue.id % FESTIVAL_THEMES.length];
    const year = this.days[day]?.year ?? FIRST_YEAR;
    const start = minutesOf(random.pick(START_TIMES.festival));
    // The gates close at 23:00 on the last day.
    const end = (days - 1) * MINUTES_PER_DAY + 23 * 60;
    return { name: `${venue.city} ${theme} Festival ${year}`, start, end, performers };
  }

  /** The acts of a genre, falling back to every act when a small catalog has none of that genre. */
  private acts(genre: string): number[] {
    const acts = this.roster.byGenre.get(genre);
    if (acts !== undefined && acts.length > 0) return acts;
    return [...this.roster.byGenre.values()].flat();
  }

  private name(id: number): string {
    return this.names[id] ?? `Performer ${id}`;
  }
}
