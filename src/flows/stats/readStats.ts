import type { Store } from "../../store/db.ts";
import { userStatsRows } from "../../store/stats.ts";
import type { VenuePerformerCache } from "../catalogFacts/venuePerformerCache.ts";
import { tallyStats, type UserStats } from "./tallies.ts";

export type { UserStats } from "./tallies.ts";

/**
 * The user's statistics (docs/architecture.md §5), or null when the partner has no such user: the
 * visible events from one statement, their venues and performers from the cache at the version that
 * statement read (see `VenuePerformerCache`), the figures counted in memory.
 */
export async function readStats(
  { store, venuesAndPerformers }: { store: Store; venuesAndPerformers: VenuePerformerCache },
  owner: { partnerId: string; userId: string },
  top: number,
): Promise<UserStats | null> {
  const rows = await userStatsRows(store, owner);
  if (rows === null) return null;
  const catalog = await venuesAndPerformers.lookUp(
    store,
    rows.catalogVersion,
    new Set(rows.visible.map((event) => event.venueId)),
    new Set(rows.visible.flatMap((event) => event.performerIds)),
  );
  return tallyStats(rows, catalog, top);
}
