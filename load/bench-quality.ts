import { cpus } from "node:os";
import { CONFIDENCE, SUGGESTED_MIN_CONFIDENCE } from "../src/confidence/confidence.ts";
import { matcherFromArrays } from "../src/shards/engine.ts";
import type { MatchSettings } from "../src/shards/matcher.ts";
import { best, type Candidate, CandidateFinder, SCORE, TIME_FIRST } from "./quality/candidates.ts";
import {
  attendedByCloseness,
  CLOSENESS_BANDS,
  type Confidences,
  coreEvidence,
  evaluate,
  type RuleResult,
} from "./quality/evaluate.ts";
import { thresholdFor } from "./quality/metrics.ts";
import { confidenceRanker, ITEM_COUNT, type Ranker } from "./quality/rankers.ts";
import {
  kindsRankedTable,
  precisionAt95Line,
  rankedTable,
  rulesTable,
  thresholdTable,
  waysTable,
  writeChart,
} from "./quality/report.ts";
import { generateWorld } from "./quality/world.ts";
import { MIX_USERS, MIXES, type Mix, NEW_KINDS } from "./quality/worldModel.ts";
import { writeResultJson } from "./report/write.ts";

/**
 * `bun run bench:quality [--seed S] [--users N] [--cities N] [--mix old|new|all] [--outside-cap X]`
 * How right users' histories are: simulated camera rolls with known truth (load/quality/world.ts)
 * matched in-process by the real engine under the rule of docs/api.md §5, and by the rule it
 * replaced (time distance first, applied here to the same candidates). Prints precision and recall of
 * attended events per kind of user, unranked and ranked, and writes JSON and an SVG chart to
 * load/results/. `--mix old` is the first version's users (400 by default); `new` the kinds it did not
 * model, with season-ticket holders (400); `all` both (800, the default).
 */

const SETTINGS: MatchSettings = {
  radiusM: 500,
  beforeMinutes: 120,
  afterMinutes: 60,
  defaultDurationMinutes: 300,
};
const CHUNK = 4096;

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer`);
  return value;
}

function mixOption(): Mix {
  const at = process.argv.indexOf("--mix");
  const value = at >= 0 ? process.argv[at + 1] : "all";
  if (!MIXES.includes(value as Mix)) throw new Error(`--mix takes one of ${MIXES.join(", ")}`);
  return value as Mix;
}

const mix = mixOption();
const options = {
  mix,
  seed: option("seed", 1),
  users: option("users", MIX_USERS[mix]),
  cities: option("cities", 15),
  venuesPerCity: 20,
};
/**
 * `--outside-cap X`: the confidence ranked with another ceiling on outside evidence, X times the best
 * outside weight (api.md §15).
 */
function outsideCapOption(): number {
  const at = process.argv.indexOf("--outside-cap");
  if (at < 0) return CONFIDENCE.outsideCap;
  const value = Number(process.argv[at + 1]);
  if (!(value > 0)) throw new Error("--outside-cap takes a positive number");
  return value;
}
const parameters = { ...CONFIDENCE, outsideCap: outsideCapOption() };
const rankers: Ranker[] = [ITEM_COUNT, confidenceRanker(SETTINGS, parameters)];

let started = performance.now();
const world = generateWorld(options, SETTINGS);
const generateSeconds = (performance.now() - started) / 1000;
const truth = world.users.reduce((sum, user) => sum + user.truth.size, 0);
console.log(
  `world: ${world.venues.length} venues, ${world.events.length} events, ${world.users.length} users, ` +
    `${world.photos.length} photos, ${truth} true attended events (${generateSeconds.toFixed(1)} s)`,
);

started = performance.now();
const finder = new CandidateFinder(world.venues, world.events, SETTINGS);
const candidates = world.photos.map((photo) => finder.find(photo));
const timeFirst = candidates.map((list) => best(list, TIME_FIRST));
const scored = candidates.map((list) => best(list, SCORE));

// The amended rule's answers come from the engine; the candidates' own pick must agree with it.
const engine = matcherFromArrays(world.venues, world.events, { settings: SETTINGS, shards: 4 });
const engineChosen: (Candidate | null)[] = [];
let disagreements = 0;
for (let first = 0; first < world.photos.length; first += CHUNK) {
  const answers = await engine.match(world.photos.slice(first, first + CHUNK));
  answers.forEach((answer, j) => {
    const mine = scored[first + j] ?? null;
    if ((answer?.eventId ?? null) !== (mine?.event.id ?? null)) disagreements++;
    engineChosen.push(answer === null ? null : mine?.event.id === answer.eventId ? mine : null);
  });
}
await engine.close();
const matchSeconds = (performance.now() - started) / 1000;
if (disagreements > 0) console.log(`PROBLEM engine and candidate list disagree on ${disagreements} photos`);

started = performance.now();
const endOf = (event: Candidate["event"]) => finder.end(event);
const before = evaluate(world, TIME_FIRST.name, timeFirst, rankers, endOf);
const after = evaluate(world, SCORE.name, engineChosen, rankers, endOf);
const results: RuleResult[] = [before, after];
const evaluateSeconds = (performance.now() - started) / 1000;

const changed = timeFirst.filter(
  (c, i) => (c?.event.id ?? null) !== (engineChosen[i]?.event.id ?? null),
).length;
// The confidence ranker's threshold for recall 0.95 over all kinds, and what it lets through.
const confidenceAt = rankers.findIndex((r) => r.name === "confidence");
const allKinds = after.groups.find((g) => g.group === "all kinds")?.ranked[confidenceAt]?.metrics;
const threshold95 = allKinds === undefined ? 0 : (thresholdFor(allKinds, 0.95) ?? 0);
const core = coreEvidence(world, engineChosen, parameters, {
  confidences: after.confidences[confidenceAt] as Confidences,
  threshold: threshold95,
});
const closeness = attendedByCloseness(world, engineChosen);
const summary = {
  options: { ...options, outsideCap: parameters.outsideCap },
  core,
  closeness,
  settings: SETTINGS,
  machine: { cpus: cpus().length },
  world: {
    venues: world.venues.length,
    events: world.events.length,
    users: world.users.length,
    photos: world.photos.length,
    trueEvents: truth,
    photosWithCandidates: candidates.filter((list) => list.length > 0).length,
    photosWithRivals: candidates.filter((list) => list.length > 1).length,
    photosTheRulesSendElsewhere: changed,
  },
  engineDisagreements: disagreements,
  seconds: { generate: generateSeconds, match: matchSeconds, evaluate: evaluateSeconds },
  results: results.map(({ confidences: _, ...r }) => ({
    ...r,
    ways: r.ways.map(({ way, truth, scores }) => ({
      way,
      truth,
      shown: scores.map(({ ranker, shown }) => ({
        ranker,
        shown: shown.length,
        kept: shown.filter((score) => score >= SUGGESTED_MIN_CONFIDENCE).length,
      })),
    })),
    groups: r.groups.map((g) => ({
      ...g,
      ranked: g.ranked.map(({ ranker, metrics }) => ({ ranker, ...metrics, curve: undefined })),
    })),
  })),
  curves: results.map((r) => ({
    rule: r.rule,
    groups: r.groups
      .filter((g) => g.group === "all kinds" || g.group === "attending kinds")
      .map((g) => ({
        group: g.group,
        ranked: g.ranked.map(({ ranker, metrics }) => ({ ranker, curve: metrics.curve })),
      })),
  })),
};
const json = writeResultJson("bench-quality", summary);
const svg = json.replace(/\.json$/, ".svg");
await writeChart(svg, results);

console.log(
  `photos with a candidate ${summary.world.photosWithCandidates}, with rivals ${summary.world.photosWithRivals}, ` +
    `matched elsewhere by the amended rule ${changed}; engine disagreements ${disagreements}`,
);
console.log(`\nUnranked: every event in the history (before = ${before.rule}, after = ${after.rule}):\n`);
console.log(rulesTable(before, after));
console.log("\nRanked by confidence:\n");
console.log(rankedTable(results, ["attending kinds", "all kinds", "season-ticket", "resident"]));
console.log(`\n${precisionAt95Line(after, "confidence", ["all kinds", "attending kinds"])}`);
console.log(
  `attended events with no kept item in the venue's core: ${core.attendedWithoutCore} of ${core.attended} ` +
    `(${((100 * core.attendedWithoutCore) / core.attended).toFixed(1)} %; a queue alone among them: the last ` +
    `table); events not attended with one: ${core.notAttendedWithCore}`,
);
console.log(
  `at ${threshold95}, the confidence recall 0.95 needs: ${core.notAttendedAbove} events not attended, ` +
    `${core.notAttendedWithCoreAbove} of them with a kept item in the venue's core`,
);
const bands = CLOSENESS_BANDS.map(
  ([low, high], i) => `${low}-${high} ${(100 * (closeness[i] ?? 0)).toFixed(1)} %`,
).join(", ");
console.log(`photos taken during a show that were an attendance, by distance over radius: ${bands}`);
if (mix !== "old") {
  console.log(`\nThe kinds the first version did not model, ${after.rule}, ranked by confidence:\n`);
  const kinds = [...NEW_KINDS, "season-ticket", "attending kinds", "all kinds"];
  console.log(kindsRankedTable(after, "confidence", kinds));
}
console.log(`\nThe amended rule's histories at min_confidence ${SUGGESTED_MIN_CONFIDENCE}:\n`);
console.log(thresholdTable(after, "confidence", SUGGESTED_MIN_CONFIDENCE));
console.log(`\nTrue events by how they were photographed, at min_confidence ${SUGGESTED_MIN_CONFIDENCE}:\n`);
console.log(waysTable(after, "confidence", SUGGESTED_MIN_CONFIDENCE));
console.log(`\nwrote ${json} and ${svg}`);
process.exit(0);
