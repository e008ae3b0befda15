import type { CatalogColumns } from "./columns.ts";
import { haversineMeters } from "./geo.ts";
import type { MatchSettings } from "./matcher.ts";
import { paddedWindow, venueRadius } from "./reachRule.ts";

const DAY_MS = 86_400_000;

/**
 * Which events share reach with others (docs/api.md §5): an item can match two events only when their
 * padded windows overlap and their venues' circles touch. A catalog correction uses it to find the
 * events whose kept items an event moved to a new place or time may now draw away.
 */
export class CatalogReach {
  private readonly venueIndex = new Map<number, number>();
  private readonly eventIndex = new Map<number, number>();
  /** Events by each day their padded window touches. */
  private readonly byDay = new Map<number, number[]>();

  constructor(
    private readonly columns: CatalogColumns,
    private readonly settings: MatchSettings,
  ) {
    columns.venueIds.forEach((id, i) => {
      this.venueIndex.set(id, i);
    });
    columns.eventIds.forEach((id, e) => {
      this.eventIndex.set(id, e);
      const [from, to] = this.window(e);
      for (let day = Math.floor(from / DAY_MS); day <= Math.floor(to / DAY_MS); day++) {
        const list = this.byDay.get(day);
        if (list === undefined) this.byDay.set(day, [e]);
        else list.push(e);
      }
    });
  }

  /** The events (ids) whose reach overlaps that of any of `eventIds`; ids not in the index have none. */
  overlapping(eventIds: readonly number[]): Set<number> {
    const found = new Set<number>();
    for (const id of eventIds) {
      const e = this.eventIndex.get(id);
      if (e === undefined) continue;
      const [from, to] = this.window(e);
      for (let day = Math.floor(from / DAY_MS); day <= Math.floor(to / DAY_MS); day++) {
        for (const other of this.byDay.get(day) ?? []) {
          if (other !== e && this.touches(e, other, from, to)) found.add(this.columns.eventIds[other] ?? 0);
        }
      }
    }
    return found;
  }

  private window(e: number): [number, number] {
    return paddedWindow(
      this.columns.eventStarts[e] ?? 0,
      this.columns.eventEnds[e] ?? Number.NaN,
      this.settings,
    );
  }

  private touches(e: number, other: number, from: number, to: number): boolean {
    const [otherFrom, otherTo] = this.window(other);
    if (otherTo < from || otherFrom > to) return false;
    const a = this.venueIndex.get(this.columns.eventVenueIds[e] ?? 0);
    const b = this.venueIndex.get(this.columns.eventVenueIds[other] ?? 0);
    if (a === undefined || b === undefined) return false;
    const { venueLatitudes: lat, venueLongitudes: lon } = this.columns;
    const distance = haversineMeters(lat[a] ?? 0, lon[a] ?? 0, lat[b] ?? 0, lon[b] ?? 0);
    return distance <= this.radius(a) + this.radius(b);
  }

  private radius(v: number): number {
    return venueRadius(this.columns.venueRadii[v] ?? Number.NaN, this.settings);
  }
}
