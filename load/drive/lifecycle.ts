import type { Random } from "../../src/store/catalog/generate/random.ts";
import type { Batch } from "../traffic/batches.ts";
import type { PlannedRequest, Workload } from "./cannon.ts";
import { mediaRequest } from "./workloads.ts";

/**
 * Deletions in the partner flow (docs/api.md §16). A camera roll loses a few percent of its items a
 * month (3% here); with about one incremental scan a day, each scan finds about a thousandth of the roll
 * gone: for the seeded rolls (tens to hundreds of items) one asset or a few, on about half of the scans.
 * Most of what a roll loses never matched, so many of the ids sent are not found.
 */
export const DELETION = { perIncrementalScan: 0.5, maxIds: 4 } as const;

/** Account erasures: one session in a thousand closes an account (created, one batch, erased). */
export const ERASURE_PER_SESSION = 0.001;

/**
 * The seeded users' media ids follow load/seed/keptItems.ts (`<id prefix>-<sequence>/L0/001`, the
 * sequence from 0 per user), so a deletion can name items the user keeps; past the user's last item, an
 * id is one the user never kept.
 */
const SEEDED_SEQUENCES = 64;

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, "0");

/** One deletion request: the assets an incremental scan found gone from the user's roll. */
export function deletionRequest(random: Random, userId: string): PlannedRequest {
  const ids = new Set<string>();
  for (let i = random.int(1, DELETION.maxIds); i > 0; i--) {
    ids.add(`${userId.slice(0, 8)}-${hex(random.int(0, SEEDED_SEQUENCES - 1), 8)}/L0/001`);
  }
  return {
    kind: "delete",
    method: "POST",
    path: `/v1/users/${userId}/media/delete`,
    body: Buffer.from(JSON.stringify({ ids: [...ids] })),
    items: 0,
  };
}

/** The user creation of a session that closes its account: the id comes back in the answer. */
export function closingAccount(email: string): PlannedRequest {
  return {
    kind: "users",
    method: "POST",
    path: "/v1/users",
    body: Buffer.from(JSON.stringify({ email })),
    items: 0,
  };
}

const USER_ID = /"user_id":"([0-9a-f-]{36})"/;

/**
 * `base` with the closing accounts' sessions played out: once an account of `closing` is created, one
 * batch is sent for it and, once that is answered, the account is erased. Each step waits for the
 * answer of the one before, as a partner's would. The rotation comes back to the creation later, which
 * creates the account anew (the email is free again) and closes it again.
 */
export function withClosingAccounts(
  base: Workload,
  closing: ReadonlySet<PlannedRequest>,
  nextBatch: () => Batch,
): Workload {
  const followUps: PlannedRequest[] = [];
  const erasureAfter = new WeakMap<PlannedRequest, PlannedRequest>();
  return {
    next: () => followUps.shift() ?? base.next(),
    onResponse(request, status, body) {
      base.onResponse?.(request, status, body);
      const erasure = erasureAfter.get(request);
      if (erasure) followUps.push(erasure);
      if (!closing.has(request) || status >= 300) return;
      const userId = USER_ID.exec(body)?.[1];
      if (userId === undefined) return;
      const batch = mediaRequest(userId, nextBatch());
      erasureAfter.set(batch, {
        kind: "erase",
        method: "DELETE",
        path: `/v1/users/${userId}`,
        body: null,
        items: 0,
      });
      followUps.push(batch);
    },
  };
}
