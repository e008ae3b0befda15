import type { MatchSettings } from "../../src/shards/matcher.ts";
import type { Catalog } from "./worldCatalog.ts";
import { type City, dayOf, HOUR_MS, pick, type Rng } from "./worldGeometry.ts";
import type { AttendanceWay, WorldEvent, WorldUser } from "./worldModel.ts";

/** What every part of a simulated camera roll draws on: the random stream, the catalog, the rule's settings. */
export type Scene = { next: Rng; catalog: Catalog; settings: MatchSettings };

/** A photo at a place and instant, taken at the event `origin` (0 when at none). */
export type Shoot = (at: [number, number], takenAtMs: number, origin?: number) => void;

/** One user's year as a kind's own behaviour sees it. */
export type Life = Scene & {
  user: WorldUser;
  centre: City;
  /** Where the user lives: a kind may move it (inside a festival ground's radius). */
  home: [number, number];
  shoot: Shoot;
  /** Local days in the home city already spent at an event: no second plan on them. */
  busy: Set<number>;
  /** Days spent in another city: no photos at home, work or around the home town. */
  away: Set<number>;
};

/**
 * When an event really ends, for people who stay to the end: the catalog's end, or three hours (a game,
 * a concert) where the catalog has none. Matching pads a missing end to the default duration instead.
 */
export const showEnd = (event: WorldEvent) => event.endsAtMs ?? event.startsAtMs + 3 * HOUR_MS;

/** The local day of an event in its city. */
export const eventDay = (life: Scene, event: WorldEvent) =>
  dayOf(life.catalog.cityOf(event), event.startsAtMs);

/** An event from the list on a day the user has free, or null after a few tries; marks its day busy. */
export function freeEvent(life: Life, events: readonly WorldEvent[]): WorldEvent | null {
  for (let tries = 0; tries < 20 && events.length > 0; tries++) {
    const event = pick(life.next, events);
    const day = eventDay(life, event);
    if (life.busy.has(day)) continue;
    life.busy.add(day);
    return event;
  }
  return null;
}

/** Attends: the event is in the truth when it is licensed, as a right history would show it. */
export function attend(user: WorldUser, event: WorldEvent, way: AttendanceWay) {
  if (!event.licensed) return;
  user.truth.add(event.id);
  user.ways.set(event.id, way);
}
