import { Random } from "../../src/store/catalog/generate/random.ts";
import type { Batch } from "../traffic/batches.ts";
import type { PlannedRequest, Workload } from "./cannon.ts";
import {
  closingAccount,
  DELETION,
  deletionRequest,
  ERASURE_PER_SESSION,
  withClosingAccounts,
} from "./lifecycle.ts";
import { eventsPath, mediaRequest, rotation } from "./workloads.ts";

/** A user the mixed scenario can act as: its id and the body that (idempotently) creates it. */
export type MixedUser = { id: string; email: string };

export type MixedInput = {
  seed: number;
  /** Users with a history already (kept items): app launches and incremental scans. */
  returning: readonly MixedUser[];
  /** Users without one: full library scans. */
  fresh: readonly MixedUser[];
  batches: readonly Batch[];
  sessions: number;
};

/**
 * The share of each session type (docs/api.md §6): most app launches only read the history; some run the
 * narrow incremental scan of a synced user (one batch); a few run a new user's full scan (several).
 */
export const SESSION_MIX = { launch: 0.5, incremental: 0.4, fullScan: 0.1 } as const;

/** Steps of one session sit this many places apart in the rotation, so they rarely run at once. */
const INTERLEAVE = 64;

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

function get(kind: "stats" | "events", path: string): PlannedRequest {
  return { kind, method: "GET", path, body: null, items: 0 };
}

function post(kind: "users" | "sync", path: string, body: unknown): PlannedRequest {
  return { kind, method: "POST", path, body: json(body), items: 0 };
}

/**
 * A session of the partner flow (docs/api.md §6): read stats at launch (has_synced decides the scan), ensure the user exists,
 * send the scan's batches and the deletion of assets gone from the roll (§16), close the scan with
 * sync-complete and an honest photos_processed, show the history.
 */
function session(
  user: MixedUser,
  batches: readonly Batch[],
  deletion: PlannedRequest | null,
): PlannedRequest[] {
  const stats = get("stats", `/v1/users/${user.id}/stats`);
  const history = get("events", eventsPath(user.id, null));
  if (batches.length === 0) return [stats, history];
  const items = batches.reduce((sum, batch) => sum + batch.items, 0);
  return [
    post("users", "/v1/users", { email: user.email }),
    stats,
    ...batches.map((batch) => mediaRequest(user.id, batch)),
    ...(deletion === null ? [] : [deletion]),
    post("sync", `/v1/users/${user.id}/sync-complete`, { photos_processed: items }),
    history,
  ];
}

/** Pre-builds every session, then interleaves them in groups so one session's steps are spread out. */
export function mixedWorkload(input: MixedInput): Workload {
  if (input.returning.length === 0 && input.fresh.length === 0) throw new Error("mixed needs users");
  const random = new Random(input.seed);
  let nextBatch = 0;
  const takeBatches = (count: number) =>
    Array.from({ length: count }, () => input.batches[nextBatch++ % input.batches.length] as Batch);
  const sessions: PlannedRequest[][] = [];
  const closing = new Set<PlannedRequest>();
  for (let i = 0; i < input.sessions; i++) {
    if (random.chance(ERASURE_PER_SESSION)) {
      const creation = closingAccount(`closing-${input.seed}-${i}@load.example`);
      closing.add(creation);
      sessions.push([creation]);
      continue;
    }
    const draw = random.float();
    const fullScan = draw >= SESSION_MIX.launch + SESSION_MIX.incremental || input.returning.length === 0;
    if (fullScan && input.fresh.length > 0) {
      sessions.push(session(random.pick(input.fresh), takeBatches(random.int(3, 8)), null));
    } else if (draw < SESSION_MIX.launch) {
      sessions.push(
        session(random.pick(input.returning.length > 0 ? input.returning : input.fresh), [], null),
      );
    } else {
      const seeded = input.returning.length > 0;
      const user = random.pick(seeded ? input.returning : input.fresh);
      const deletion =
        seeded && random.chance(DELETION.perIncrementalScan) ? deletionRequest(random, user.id) : null;
      sessions.push(session(user, takeBatches(1), deletion));
    }
  }
  const requests: PlannedRequest[] = [];
  for (let group = 0; group < sessions.length; group += INTERLEAVE) {
    const members = sessions.slice(group, group + INTERLEAVE);
    const longest = Math.max(...members.map((steps) => steps.length));
    for (let step = 0; step < longest; step++) {
      for (const steps of members) {
        const request = steps[step];
        if (request) requests.push(request);
      }
    }
  }
  return withClosingAccounts(rotation(requests), closing, () => takeBatches(1)[0] as Batch);
}
