import type { Batch } from "../traffic/batches.ts";
import type { PlannedRequest, Workload } from "./cannon.ts";

/** Round robin over a fixed list shared by all connections, so concurrent requests differ. */
export function rotation(requests: readonly PlannedRequest[]): Workload {
  if (requests.length === 0) throw new Error("a workload needs at least one request");
  let next = 0;
  return {
    next() {
      const request = requests[next] as PlannedRequest;
      next = (next + 1) % requests.length;
      return request;
    },
  };
}

export function mediaRequest(userId: string, batch: Batch): PlannedRequest {
  return {
    kind: "media",
    method: "POST",
    path: `/v1/users/${userId}/media`,
    body: batch.body,
    items: batch.items,
  };
}

/** The pre-generated batches in order; past the end the list starts over (a re-sync of the same rolls). */
export function ingestWorkload(userIds: readonly string[], batches: readonly Batch[]): Workload {
  return rotation(batches.map((batch) => mediaRequest(userIds[batch.user] as string, batch)));
}

export function statsWorkload(userIds: readonly string[]): Workload {
  return rotation(
    userIds.map((id) => ({
      kind: "stats",
      method: "GET",
      path: `/v1/users/${id}/stats`,
      body: null,
      items: 0,
    })),
  );
}

/** Matches `"next_cursor":"…"` without parsing a page that can carry hundreds of media entries. */
const NEXT_CURSOR = /"next_cursor":"((?:[^"\\]|\\.)*)"/;

export const HISTORY_PAGE = 25;

export function eventsPath(userId: string, cursor: string | null): string {
  const query = cursor === null ? "" : `&cursor=${encodeURIComponent(JSON.parse(`"${cursor}"`) as string)}`;
  return `/v1/users/${userId}/events?limit=${HISTORY_PAGE}&include_media=true${query}`;
}

/**
 * Users page through their history with media: a first page, then each next_cursor the server returns
 * until the last page. Follow-up pages queue up and are served before new first pages, so every started
 * walk is finished; the queue holds at most one entry per connection.
 */
export function historyWorkload(userIds: readonly string[]): Workload {
  const firstPages = rotation(
    userIds.map((id) => ({
      kind: "events",
      method: "GET",
      path: eventsPath(id, null),
      body: null,
      items: 0,
    })),
  );
  const owners = new Map<string, string>();
  for (const id of userIds) owners.set(eventsPath(id, null), id);
  const followUps: PlannedRequest[] = [];
  const userOf = new WeakMap<PlannedRequest, string>();
  return {
    next() {
      return followUps.shift() ?? firstPages.next();
    },
    onResponse(request, status, body) {
      if (status !== 200) return;
      const cursor = NEXT_CURSOR.exec(body)?.[1];
      const user = userOf.get(request) ?? owners.get(request.path);
      if (cursor === undefined || user === undefined) return;
      const page: PlannedRequest = {
        kind: "events",
        method: "GET",
        path: eventsPath(user, cursor),
        body: null,
        items: 0,
      };
      userOf.set(page, user);
      followUps.push(page);
    },
  };
}
