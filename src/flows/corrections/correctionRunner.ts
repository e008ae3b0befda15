import type { Matcher, MatchSettings } from "../../shards/matcher.ts";
import { CatalogReach } from "../../shards/reach.ts";
import type { CatalogSource } from "../../shards/source.ts";
import {
  claimCorrections,
  finishCorrections,
  type Replacement,
  renewCorrections,
  replaceUserItems,
  type StoredItem,
  usersAtEvents,
} from "../../store/corrections.ts";
import type { Store } from "../../store/db.ts";
import { describeFailure } from "../../store/failures.ts";
import type { KeptMedia } from "../../store/ingest.ts";
import { type AcceptedItem, parseTakenAt } from "../ingest/mediaItems.ts";
import { placeItems } from "../ingest/placement.ts";

/** Queued events claimed at a time: each claim costs a pass over the kept items to find their users. */
const CLAIM_EVENTS = 1000;
/** How often a claim's lease is extended while its users are worked through (the lease lasts two minutes). */
const RENEW_MS = 30_000;

type Log = (event: string, fields?: Record<string, unknown>) => void;

export type CorrectionDeps = {
  store: Store;
  /** The engine batches match on, and the catalog version its index holds. */
  matcher: Matcher;
  indexVersion: () => number;
  /** Where the events' reach is read from: the stored catalog, at least as new as the index. */
  catalog: CatalogSource;
  settings: MatchSettings;
  log: Log;
  /** Told after each user's items were placed again. */
  onReplaced?: (replacement: Replacement) => void;
};

/** A kept item as a batch would hand it to the matcher, from what the store keeps of it. */
function acceptedOf(item: StoredItem): AcceptedItem | null {
  const takenAt = parseTakenAt(item.takenAt);
  if (takenAt === null) return null;
  const { mediaId, eventId: _, takenAt: __, ...stored } = item;
  return { ...stored, id: mediaId, takenAt };
}

/**
 * Places again the kept items at events a catalog import corrected (contract §15), exactly as a re-send
 * of each item would: it stays, moves to the event it now matches, or goes. The events an import queued
 * are worked through once this instance's index holds their catalog version, with the events whose
 * reach overlaps theirs (an event moved onto another's place and time may draw its items away). Any
 * instance may do it; a lease keeps two from doing the same events, and one that stops half-way leaves
 * its events to be taken over when the lease ends.
 */
export class CorrectionRunner {
  /** The reach of every event, held while a drain works. */
  private reach: { version: string; reach: CatalogReach } | null = null;

  constructor(private readonly deps: CorrectionDeps) {}

  /**
   * Works until nothing queued is placeable by the current index; returns what it did. The events'
   * reach (a copy of the catalog's columns) is loaded by the first claim and let go when the drain ends:
   * corrections are rare, and the copy is the size of the index.
   */
  async drain(): Promise<Replacement & { events: number }> {
    try {
      return await this.drainClaims();
    } finally {
      this.reach = null;
    }
  }

  private async drainClaims(): Promise<Replacement & { events: number }> {
    const { store, settings } = this.deps;
    const totals = { events: 0, items: 0, moved: 0, removed: 0 };
    const indexVersion = this.deps.indexVersion();
    for (;;) {
      const claimed = await claimCorrections(store, indexVersion, CLAIM_EVENTS);
      if (claimed.length === 0) break;
      const ids = claimed.map((c) => c.eventId);
      const targets = [...new Set([...ids, ...(await this.reachOf()).overlapping(ids)])];
      let renewed = performance.now();
      for (const userId of await usersAtEvents(store, targets)) {
        if (performance.now() - renewed > RENEW_MS) {
          await renewCorrections(store, ids);
          renewed = performance.now();
        }
        const done = await replaceUserItems(
          store,
          userId,
          targets,
          settings.defaultDurationMinutes,
          (items) => this.place(items),
        );
        if (done === null) continue;
        totals.items += done.items;
        totals.moved += done.moved;
        totals.removed += done.removed;
        this.deps.onReplaced?.(done);
      }
      await finishCorrections(store, claimed);
      totals.events += claimed.length;
    }
    return totals;
  }

  private async reachOf(): Promise<CatalogReach> {
    const version = await this.deps.catalog.version();
    if (this.reach?.version !== version) {
      const loaded = await this.deps.catalog.load();
      this.reach = { version: loaded.version, reach: new CatalogReach(loaded.columns, this.deps.settings) };
    }
    return this.reach.reach;
  }

  /**
   * Where a re-send would keep each item. An item whose best event is the unlicensed one it is kept at
   * stays: licensing is not a correction, and such items wait there for the licence to return (§12).
   */
  private async place(items: readonly StoredItem[]): Promise<(KeptMedia | null | "stay")[]> {
    const accepted = items.map(acceptedOf);
    const placeable = accepted.filter((item): item is AcceptedItem => item !== null);
    const placements = await placeItems(this.deps.matcher, placeable);
    let next = 0;
    return items.map((item, i) => {
      if (accepted[i] === null) return "stay";
      const { candidate, kept } = placements[next++] ?? { candidate: null, kept: null };
      if (kept !== null) return kept;
      return candidate !== null && candidate.eventId === item.eventId ? "stay" : null;
    });
  }
}

/**
 * Runs `drain` every `pollSeconds`, one drain at a time, logging what each drain that did anything did and
 * one line when drains start failing (the database away) and one when they work again.
 */
export function startCorrections(deps: CorrectionDeps, pollSeconds: number): { close(): Promise<void> } {
  const runner = new CorrectionRunner(deps);
  let running: Promise<void> | null = null;
  let failing = false;
  const tick = () => {
    if (running !== null) return;
    const started = performance.now();
    running = runner
      .drain()
      .then((done) => {
        if (failing) deps.log("catalog_corrections_recovered");
        failing = false;
        if (done.events === 0) return;
        deps.log("catalog_corrections_applied", {
          ...done,
          stayed: done.items - done.moved - done.removed,
          seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
        });
      })
      .catch((error: unknown) => {
        if (!failing) deps.log("catalog_corrections_failed", describeFailure(error));
        failing = true;
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, pollSeconds * 1000);
  tick();
  return {
    close: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
