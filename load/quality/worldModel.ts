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
export const KIND_SHARES: Record<UserKind, number> = {
  attendee: 0.25,
  "next-door": 0.1,
  festival: 0.05,
  "season-ticket": 0.05,
  "clock-off": 0.05,
  resident: 0.15,
  worker: 0.1,
  "passer-by": 0.25,
};

export const KIND_EVENTS: Record<UserKind, [number, number]> = {
  attendee: [8, 30],
  "next-door": [8, 25],
  festival: [2, 8],
  "season-ticket": [0, 4],
  "clock-off": [8, 20],
  resident: [2, 6],
  worker: [2, 6],
  "passer-by": [0, 3],
};

export type VenueKind = "stadium" | "arena" | "club" | "theatre" | "festival";

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
