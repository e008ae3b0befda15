import type { IndexEvent, IndexVenue, MatchQuery, MatchSettings } from "../../src/shards/matcher.ts";

export const USER_KINDS = [
  "attendee",
  "next-door",
  "festival",
  "season-ticket",
  "clock-off",
  "resident",
  "worker",
  "passer-by",
  "hotel-guest",
  "bar-few-nights",
  "bar-many-nights",
  "festival-neighbour",
  "tailgater",
  "double-header",
] as const;
export type UserKind = (typeof USER_KINDS)[number];

/** Kinds whose photos are mostly taken at the events they attend; the rest mostly happen to be near venues. */
export const ATTENDING_KINDS: readonly UserKind[] = [
  "attendee",
  "next-door",
  "festival",
  "season-ticket",
  "clock-off",
  "tailgater",
  "double-header",
];

/** Kinds the first version of the benchmark did not model, reported apart with season-ticket holders. */
export const NEW_KINDS: readonly UserKind[] = [
  "hotel-guest",
  "bar-few-nights",
  "bar-many-nights",
  "festival-neighbour",
  "tailgater",
  "double-header",
];

export const MIXES = ["old", "new", "all"] as const;
export type Mix = (typeof MIXES)[number];

const OLD_SHARES: Partial<Record<UserKind, number>> = {
  attendee: 0.25,
  "next-door": 0.1,
  festival: 0.05,
  "season-ticket": 0.05,
  "clock-off": 0.05,
  resident: 0.15,
  worker: 0.1,
  "passer-by": 0.25,
};

const NEW_SHARES: Partial<Record<UserKind, number>> = {
  "hotel-guest": 0.2,
  "bar-few-nights": 0.15,
  "bar-many-nights": 0.15,
  "festival-neighbour": 0.15,
  tailgater: 0.2,
  "double-header": 0.15,
};

const scaled = (shares: Partial<Record<UserKind, number>>, factor: number) =>
  Object.fromEntries(Object.entries(shares).map(([kind, share]) => [kind, share * factor]));

/**
 * Share of users of each kind in a mix (each sums to 1), generated in this order. `old` is the first
 * version's world, users for users; `new` the new kinds with season-ticket holders; `all` halves both,
 * so that at twice the users its old kinds are the old world's users, photo for photo.
 */
export const MIX_SHARES: Record<Mix, Partial<Record<UserKind, number>>> = {
  old: OLD_SHARES,
  new: { ...scaled(NEW_SHARES, 0.85), "season-ticket": 0.15 },
  all: { ...scaled(OLD_SHARES, 0.5), ...scaled(NEW_SHARES, 0.5) },
};

/** Users by default: at least 20 of every kind in the mix. */
export const MIX_USERS: Record<Mix, number> = { old: 400, new: 400, all: 800 };

/** How many events a user of the kind attends as an ordinary audience member (seat, queue, start). */
export const KIND_EVENTS: Record<UserKind, [number, number]> = {
  attendee: [8, 30],
  "next-door": [8, 25],
  festival: [2, 8],
  "season-ticket": [0, 4],
  "clock-off": [8, 20],
  resident: [2, 6],
  worker: [2, 6],
  "passer-by": [0, 3],
  "hotel-guest": [0, 3],
  "bar-few-nights": [1, 4],
  "bar-many-nights": [1, 4],
  "festival-neighbour": [1, 4],
  tailgater: [0, 3],
  "double-header": [2, 8],
};

export type VenueKind = "stadium" | "arena" | "club" | "theatre" | "festival";

export type WorldVenue = IndexVenue & { kind: VenueKind; city: number; neighbour: number | null };
export type WorldEvent = IndexEvent;

/** `origin`: the event the photo was taken at, 0 for every other photo. */
export type Photo = MatchQuery & { user: number; origin: number };

/**
 * How someone at an event photographed it: from the seat across the show, only around its start, from
 * a queue at the edge of the radius before the start and then inside (contract §14's queuing fans), from
 * that queue and nowhere else, from a parking lot and then the seat, or on a day with a game and a show.
 */
export const ATTENDANCE_WAYS = [
  "across the show",
  "around the start",
  "queue, then inside",
  "queue alone",
  "tailgate, then inside",
  "day game and evening show",
] as const;
export type AttendanceWay = (typeof ATTENDANCE_WAYS)[number];

export type WorldUser = {
  id: number;
  kind: UserKind;
  city: number;
  /** Licensed events the user was at: what a right history shows. */
  truth: Set<number>;
  /** How the user photographed each event of the truth. */
  ways: Map<number, AttendanceWay>;
};

export type World = {
  settings: MatchSettings;
  /** The mix's kinds, in the order the report lists them. */
  kinds: UserKind[];
  venues: WorldVenue[];
  events: WorldEvent[];
  users: WorldUser[];
  photos: Photo[];
};

export type WorldOptions = { seed: number; users: number; cities: number; venuesPerCity: number; mix: Mix };
