import { type ConfidenceParameters, spotCell } from "../../src/confidence/confidence.ts";
import type { Candidate } from "./candidates.ts";
import { type Counts, precision, type RankedMetrics, ranked, recall, type Scored } from "./metrics.ts";
import type { Attendance, KeptItem, Ranker } from "./rankers.ts";
import {
  ATTENDANCE_WAYS,
  ATTENDING_KINDS,
  type AttendanceWay,
  type UserKind,
  type World,
} from "./worldModel.ts";

/**
 * Histories as the service would build them from one rule's answers (an event is in the history when
 * a kept item, one whose best candidate is licensed, lands on it), compared with the truth per kind
 * of user, for the kinds that attend and for everyone.
 */

const TOTALS = ["attending kinds", "all kinds"] as const;
export type Group = UserKind | (typeof TOTALS)[number];

export type GroupResult = {
  group: Group;
  users: number;
  truth: number;
  shown: number;
  correct: number;
  precision: number;
  recall: number;
  /** Events shown that the user was not at, per user (a year of photos each). */
  falsePerUser: number;
  /** Of those, the ones that photos taken at another event (one the user was at) landed on. */
  falseFromEventsPerUser: number;
  ranked: { ranker: string; metrics: RankedMetrics }[];
};

/** The true events attended one way: how many, and each ranker's confidences of those in the history. */
export type WayResult = { way: AttendanceWay; truth: number; scores: { ranker: string; shown: number[] }[] };

/** Each ranker's confidences of every history's events: user id, then event id. */
export type Confidences = Map<number, Map<number, number>>;

export type RuleResult = {
  rule: string;
  kept: number;
  groups: GroupResult[];
  ways: WayResult[];
  confidences: Confidences[];
};

function groupsOf(kind: UserKind): Group[] {
  return ATTENDING_KINDS.includes(kind) ? [kind, "attending kinds", "all kinds"] : [kind, "all kinds"];
}

export function evaluate(
  world: World,
  rule: string,
  chosen: readonly (Candidate | null)[],
  rankers: readonly Ranker[],
  endOf: (event: Candidate["event"]) => number,
): RuleResult {
  const byUser = new Map<number, Map<number, KeptItem[]>>();
  let kept = 0;
  world.photos.forEach((photo, i) => {
    const candidate = chosen[i] ?? null;
    if (candidate === null || !candidate.event.licensed) return;
    kept++;
    const events = byUser.get(photo.user) ?? new Map<number, KeptItem[]>();
    const items = events.get(candidate.event.id) ?? [];
    items.push({ photo, candidate });
    events.set(candidate.event.id, items);
    byUser.set(photo.user, events);
  });

  // The mix's kinds only, so that a mix reports what it simulated.
  const names: Group[] = [...world.kinds, ...TOTALS];
  type Tally = Counts & { users: number; fromEvents: number };
  const counts = new Map<Group, Tally>();
  const pairs = new Map<Group, Scored[][]>();
  for (const group of names) {
    counts.set(group, { users: 0, truth: 0, shown: 0, correct: 0, fromEvents: 0 });
    pairs.set(
      group,
      rankers.map(() => []),
    );
  }
  const confidences: Confidences[] = rankers.map(() => new Map());
  const ways = ATTENDANCE_WAYS.map(
    (way): WayResult => ({ way, truth: 0, scores: rankers.map((r) => ({ ranker: r.name, shown: [] })) }),
  );
  for (const user of world.users) {
    const history: Attendance[] = [...(byUser.get(user.id) ?? new Map<number, KeptItem[]>())].map(
      ([, items]) => {
        const { event, venue } = (items[0] as KeptItem).candidate;
        return { user, event, venue, endMs: endOf(event), items };
      },
    );
    const correct = history.filter((a) => user.truth.has(a.event.id)).length;
    const fromEvents = history.filter(
      (a) => !user.truth.has(a.event.id) && a.items.some((item) => item.photo.origin !== 0),
    ).length;
    const scores = rankers.map((ranker) => ranker.rank(history));
    scores.forEach((score, r) => {
      confidences[r]?.set(user.id, score);
    });
    for (const way of user.ways.values()) (ways[ATTENDANCE_WAYS.indexOf(way)] as WayResult).truth++;
    for (const a of history) {
      const way = user.ways.get(a.event.id);
      if (way === undefined) continue;
      const tally = ways[ATTENDANCE_WAYS.indexOf(way)] as WayResult;
      scores.forEach((score, r) => {
        tally.scores[r]?.shown.push(score.get(a.event.id) ?? 0);
      });
    }
    for (const group of groupsOf(user.kind)) {
      const c = counts.get(group) as Tally;
      c.users++;
      c.truth += user.truth.size;
      c.shown += history.length;
      c.correct += correct;
      c.fromEvents += fromEvents;
      const lists = pairs.get(group) as Scored[][];
      scores.forEach((score, r) => {
        for (const a of history)
          (lists[r] as Scored[]).push({
            score: score.get(a.event.id) ?? 0,
            correct: user.truth.has(a.event.id),
          });
      });
    }
  }

  const groups = names.map((group): GroupResult => {
    const c = counts.get(group) as Tally;
    const lists = pairs.get(group) as Scored[][];
    return {
      group,
      users: c.users,
      truth: c.truth,
      shown: c.shown,
      correct: c.correct,
      precision: precision(c),
      recall: recall(c),
      falsePerUser: c.users === 0 ? 0 : (c.shown - c.correct) / c.users,
      falseFromEventsPerUser: c.users === 0 ? 0 : c.fromEvents / c.users,
      ranked: rankers.map((ranker, r) => ({
        ranker: ranker.name,
        metrics: ranked(lists[r] as Scored[], c.truth),
      })),
    };
  });
  return { rule, kept, groups, ways, confidences };
}

export type CoreEvidence = {
  attended: number;
  attendedWithoutCore: number;
  notAttendedWithCore: number;
  /** Events not attended at or above `above.threshold`, and those of them with a kept item in the core. */
  notAttendedAbove: number;
  notAttendedWithCoreAbove: number;
};

/**
 * Which histories' events have a kept item in the venue's core (api.md §15): the events users attended
 * with none, which saturating evidence ranks with bystanders, and the events they did not attend with
 * one; with `above`, how many of the events not attended that a threshold keeps have one.
 */
export function coreEvidence(
  world: World,
  chosen: readonly (Candidate | null)[],
  parameters: ConfidenceParameters,
  above: { confidences: Confidences; threshold: number },
): CoreEvidence {
  // Per user, per event: whether any of the user's kept items there lies in the core.
  const inCore = new Map<number, Map<number, boolean>>();
  world.photos.forEach((photo, i) => {
    const candidate = chosen[i] ?? null;
    if (candidate === null || !candidate.event.licensed) return;
    const { venue, radiusM } = candidate;
    const core = spotCell(
      photo,
      { latitude: venue.latitude, longitude: venue.longitude, radiusM },
      parameters,
    ).inCore;
    const events = inCore.get(photo.user) ?? new Map<number, boolean>();
    events.set(candidate.event.id, (events.get(candidate.event.id) ?? false) || core);
    inCore.set(photo.user, events);
  });
  const counts: CoreEvidence = {
    attended: 0,
    attendedWithoutCore: 0,
    notAttendedWithCore: 0,
    notAttendedAbove: 0,
    notAttendedWithCoreAbove: 0,
  };
  for (const user of world.users) {
    const confidences = above.confidences.get(user.id);
    for (const [event, core] of inCore.get(user.id) ?? []) {
      const attended = user.truth.has(event);
      if (attended) counts.attended++;
      if (attended && !core) counts.attendedWithoutCore++;
      if (!attended && core) counts.notAttendedWithCore++;
      if (attended || (confidences?.get(event) ?? 0) < above.threshold) continue;
      counts.notAttendedAbove++;
      if (core) counts.notAttendedWithCoreAbove++;
    }
  }
  return counts;
}

/** Bands of distance over radius that the closeness rule (api.md §15) is read against. */
export const CLOSENESS_BANDS: readonly [number, number][] = [
  [0, 0.1],
  [0.1, 0.25],
  [0.3, 0.4],
  [0.5, 1],
];

/**
 * Of the kept photos taken during a show (inside [start, end]), per band of distance over radius, the
 * share the user was at: what says how fast closeness should fall.
 */
export function attendedByCloseness(world: World, chosen: readonly (Candidate | null)[]): number[] {
  const truth = new Map(world.users.map((user) => [user.id, user.truth]));
  const tallies = CLOSENESS_BANDS.map(() => ({ attended: 0, all: 0 }));
  world.photos.forEach((photo, i) => {
    const candidate = chosen[i] ?? null;
    if (candidate === null || !candidate.event.licensed || candidate.side !== "inside") return;
    const band = CLOSENESS_BANDS.findIndex(
      ([low, high]) => candidate.distanceShare >= low && candidate.distanceShare <= high,
    );
    const tally = tallies[band];
    if (tally === undefined) return;
    tally.all++;
    if (truth.get(photo.user)?.has(candidate.event.id)) tally.attended++;
  });
  return tallies.map(({ attended, all }) => (all === 0 ? 0 : attended / all));
}
