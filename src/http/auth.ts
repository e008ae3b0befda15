import type { Environment } from "../config.ts";
import type { Store } from "../store/db.ts";
import {
  type ActiveKey,
  loadActiveKeys,
  matchActiveKey,
  parsePresentedKey,
  recordKeyUse,
} from "../store/keys.ts";
import { outsideRequests, RequestScope, withinScope } from "../store/requestScope.ts";
import { ApiError } from "./errors.ts";

export type Partner = {
  partnerId: string;
  keyId: string;
  environment: Environment;
};

/** Age at which a request refreshes the key set in the background, so steady traffic never waits for a load. */
const REFRESH_AFTER_MS = 1_000;
/**
 * Past this age the key set is not trusted and a request waits for a new one: a revocation is honoured
 * within it, inside docs/api.md §10's 5 seconds (and the 2-second cache §12 describes).
 */
const MAX_AGE_MS = 2_000;
/**
 * The least time between two loads' starts. An unknown key waits for a load begun after it arrived (so a
 * key issued a moment ago works at once), and this spacing is what keeps a flood of distinct bogus keys
 * to a few queries a second in total, however many requests share each load.
 */
const MIN_LOAD_SPACING_MS = 250;

/**
 * How often a key's last use is written, at most: once a minute per key and thread, so the steady
 * traffic of a key costs one small write a minute, however many requests it sends.
 */
const KEY_USE_WRITE_EVERY_MS = 60_000;
/**
 * A key-use write is called off after this long, by the mechanism that ends requests at their deadline,
 * so a locked `api_keys` or a stalled database cannot hold a connection for it.
 */
const KEY_USE_DEADLINE_MS = 5_000;

/** One answer for every kind of bad key (docs/api.md §2 step 3): the response tells an attacker nothing. */
export const invalidKey = () =>
  new ApiError("invalid_api_key", "The X-PARTNER-API-KEY header is missing or the key is not valid here.");

export type Authenticator = (presented: string | null) => Promise<Partner>;

/** The active keys as one load read them, and when that load's query was sent (performance.now()). */
type KeySet = { keys: ReadonlyMap<string, ActiveKey>; loadedFrom: number };

type Running = { loadedFrom: number; done: Promise<KeySet> };

const ignore = () => {};

/** Resolves after `ms`; unref'd, so a wait for the next load never keeps the process alive by itself. */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Holds the environment's active keys in memory and loads them all again, one load in flight at a time:
 * a known key costs no query, an unknown one shares a load with every request that arrived around it.
 * Loads happen only for requests (no periodic timer), so an idle or discarded app leaves nothing running.
 */
export function createAuthenticator(store: Store, environment: Environment): Authenticator {
  let current: KeySet | null = null;
  let running: Running | null = null;
  let queued: Promise<KeySet> | null = null;
  let lastLoadFrom = Number.NEGATIVE_INFINITY;

  function start(): Promise<KeySet> {
    const loadedFrom = performance.now();
    lastLoadFrom = loadedFrom;
    // The load serves every request waiting on it: one that ends early must not call it off for the rest.
    const done = outsideRequests(() => loadActiveKeys(store, environment)).then((keys) => {
      const set = { keys, loadedFrom };
      if (current === null || current.loadedFrom < loadedFrom) current = set;
      return set;
    });
    const entry = { loadedFrom, done };
    running = entry;
    const finished = () => {
      if (running === entry) running = null;
    };
    done.then(finished, finished);
    return done;
  }

  /** Waits out the running load and the spacing after the last one began. */
  async function spaced(): Promise<void> {
    if (running !== null) await running.done.catch(ignore);
    const wait = lastLoadFrom + MIN_LOAD_SPACING_MS - performance.now();
    if (wait > 0) await pause(wait);
  }

  /** The next load, after the running one and no sooner than the spacing allows; callers meanwhile share it. */
  function schedule(): Promise<KeySet> {
    // `then` runs its callback later than this function returns, so `queued` is set before it is cleared.
    const next = spaced().then(() => {
      queued = null;
      return start();
    });
    // A failed load is answered to the requests awaiting it; nobody else must see it as unhandled.
    next.catch(ignore);
    queued = next;
    return next;
  }

  /** A key set whose query was sent at or after `since`. */
  function loadedSince(since: number): Promise<KeySet> {
    if (current !== null && current.loadedFrom >= since) return Promise.resolve(current);
    if (running !== null && running.loadedFrom >= since) return running.done;
    return queued ?? schedule();
  }

  const usesWritten = new Map<string, number>();

  /** Records a key's use, unless written in the last minute; the request never waits for it. */
  function noteUse(keyId: string): void {
    const now = performance.now();
    const written = usesWritten.get(keyId);
    if (written !== undefined && now - written < KEY_USE_WRITE_EVERY_MS) return;
    usesWritten.set(keyId, now);
    // A write that fails (the database away) is tried again by the first request a minute later; the
    // database watch reports the outage. It runs in a scope of its own, not the request's.
    const scope = new RequestScope(KEY_USE_DEADLINE_MS);
    withinScope(scope, () => recordKeyUse(store, keyId))
      .catch(ignore)
      .finally(() => scope.end());
  }

  function partnerOf(set: KeySet, presented: string): Partner | null {
    const key = matchActiveKey(set.keys, presented);
    if (key === null || key.environment !== environment) return null;
    return { partnerId: key.partnerId, keyId: key.id, environment: key.environment };
  }

  return async (presented) => {
    if (presented === null || parsePresentedKey(presented) === null) throw invalidKey();
    const arrived = performance.now();
    let set = current;
    if (set === null || arrived - set.loadedFrom >= MAX_AGE_MS) set = await loadedSince(arrived - MAX_AGE_MS);
    if (arrived - set.loadedFrom >= REFRESH_AFTER_MS) loadedSince(arrived - REFRESH_AFTER_MS).catch(ignore);
    let partner = partnerOf(set, presented);
    if (partner === null && set.loadedFrom < arrived)
      partner = partnerOf(await loadedSince(arrived), presented);
    if (partner === null) throw invalidKey();
    noteUse(partner.keyId);
    return partner;
  };
}
