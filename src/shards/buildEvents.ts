import type { CatalogColumns } from "./columns.ts";
import { EARTH_RADIUS_M } from "./geo.ts";
import { blockOf, gridColumn, gridRow } from "./grid.ts";
import { SAMPLE_EVERY, sharedArray, VENUE_STRIDE } from "./layout.ts";
import type { MatchSettings } from "./matcher.ts";
import { outOfRange } from "./outOfRange.ts";
import { paddedWindow, venueRadius } from "./reachRule.ts";

const RAD = Math.PI / 180;

export type EventSections = {
  eventWindow: Float64Array;
  eventSample: Float64Array;
  eventId: Int32Array;
  eventLicensed: Uint32Array;
};

function assertWholeMilliseconds(value: number, what: string): void {
  if (!Number.isSafeInteger(value))
    throw new RangeError(`${what} must be whole epoch milliseconds, got ${value}`);
}

/** Squared chord a venue can reach, a little generous: the chord test may only reject, never decide. */
function reachableChordSquared(radiusM: number): number {
  const angle = (radiusM / EARTH_RADIUS_M) * (1 + 1e-6) + 1e-12;
  const chord = 2 * Math.sin(angle / 2);
  return chord * chord * (1 + 1e-9) + 1e-18;
}

/**
 * Venues that have events, in grid order so that the cell builder meets neighbours one after the other,
 * each with the column it came from.
 */
function venueOrder(columns: CatalogColumns, hasEvents: Uint8Array): Int32Array {
  const chosen: number[] = [];
  for (let c = 0; c < hasEvents.length; c++) if (hasEvents[c] === 1) chosen.push(c);
  const block = (c: number) =>
    blockOf(
      gridRow(columns.venueLatitudes[c] ?? outOfRange(columns.venueLatitudes, c, "venueLatitudes")),
      gridColumn(columns.venueLongitudes[c] ?? outOfRange(columns.venueLongitudes, c, "venueLongitudes")),
    );
  const keys = new Float64Array(columns.venueIds.length);
  for (const c of chosen) keys[c] = block(c);
  chosen.sort(
    (x, y) =>
      (keys[x] ?? outOfRange(keys, x, "keys")) - (keys[y] ?? outOfRange(keys, y, "keys")) ||
      (columns.venueIds[x] ?? outOfRange(columns.venueIds, x, "venueIds")) -
        (columns.venueIds[y] ?? outOfRange(columns.venueIds, y, "venueIds")),
  );
  return Int32Array.from(chosen);
}

/**
 * Stable LSD radix sort (16 bits a pass) of items by non-negative integer keys below 2^53, the keys
 * travelling with the items so that every pass reads memory in order: a few linear passes, far cheaper
 * than a comparison sort on a large catalog.
 */
function radixSort(items: Uint32Array, keys: Float64Array, maxKey: number): Uint32Array {
  let sourceItems: Uint32Array = items;
  let sourceKeys: Float64Array = keys;
  let targetItems: Uint32Array = new Uint32Array(items.length);
  let targetKeys: Float64Array = new Float64Array(items.length);
  const digits = new Uint16Array(items.length);
  const counts = new Uint32Array(65_537);
  for (let scale = 1; scale <= maxKey; scale *= 65_536) {
    counts.fill(0);
    for (let i = 0; i < items.length; i++) {
      const digit = Math.floor((sourceKeys[i] ?? outOfRange(sourceKeys, i, "sourceKeys")) / scale) % 65_536;
      digits[i] = digit;
      counts[digit + 1] = (counts[digit + 1] ?? outOfRange(counts, digit + 1, "counts")) + 1;
    }
    for (let d = 0; d < 65_536; d++)
      counts[d + 1] =
        (counts[d + 1] ?? outOfRange(counts, d + 1, "counts")) +
        (counts[d] ?? outOfRange(counts, d, "counts"));
    for (let i = 0; i < items.length; i++) {
      const digit = digits[i] ?? outOfRange(digits, i, "digits");
      const place = counts[digit] ?? outOfRange(counts, digit, "counts");
      targetItems[place] = sourceItems[i] ?? outOfRange(sourceItems, i, "sourceItems");
      targetKeys[place] = sourceKeys[i] ?? outOfRange(sourceKeys, i, "sourceKeys");
      counts[digit] = place + 1;
    }
    [sourceItems, targetItems] = [targetItems, sourceItems];
    [sourceKeys, targetKeys] = [targetKeys, sourceKeys];
  }
  return sourceItems;
}

/** The venue half of a build: enough for the cell builder, which can start while events are laid out. */
export type VenueSections = { venueId: Int32Array; venueRecord: Float64Array; venueEvents: Uint32Array };

/** What laying out the events needs from planVenues, besides the venue sections. */
export type VenuePlan = VenueSections & {
  /** (from, to) pairs in input order: the gather into venue order then reads one line per event. */
  windows: Float64Array;
  /** Venue row of each event, -1 when its venue is unknown (the reference never sees those either). */
  eventRow: Int32Array;
};

/**
 * Resolves each event's window to instants, picks the venues that have events (in grid order), counts
 * their events and writes their records.
 */
export function planVenues(columns: CatalogColumns, settings: MatchSettings): VenuePlan {
  const columnOfVenue = new Map<number, number>();
  columns.venueIds.forEach((id, c) => {
    columnOfVenue.set(id, c);
  });
  const eventCount = columns.eventIds.length;
  const eventRow = new Int32Array(eventCount);
  const windows = new Float64Array(eventCount * 2);
  const hasEvents = new Uint8Array(columns.venueIds.length);
  const spans = new Float64Array(columns.venueIds.length);
  for (let e = 0; e < eventCount; e++) {
    // -1 is the eventRow sentinel of an unknown venue, not a default for a failed read.
    const c =
      columnOfVenue.get(columns.eventVenueIds[e] ?? outOfRange(columns.eventVenueIds, e, "eventVenueIds")) ??
      -1;
    eventRow[e] = c;
    if (c < 0) continue;
    hasEvents[c] = 1;
    const start = columns.eventStarts[e] ?? outOfRange(columns.eventStarts, e, "eventStarts");
    const endsAt = columns.eventEnds[e] ?? outOfRange(columns.eventEnds, e, "eventEnds");
    assertWholeMilliseconds(start, "event start");
    if (!Number.isNaN(endsAt)) assertWholeMilliseconds(endsAt, "event end");
    const [from, to] = paddedWindow(start, endsAt, settings);
    windows[e * 2] = from;
    windows[e * 2 + 1] = to;
    spans[c] = Math.max(spans[c] ?? outOfRange(spans, c, "spans"), to - from);
  }
  const venues = venueOrder(columns, hasEvents);
  const rowOfColumn = new Int32Array(columns.venueIds.length).fill(-1);
  venues.forEach((c, row) => {
    rowOfColumn[c] = row;
  });
  const venueEvents = sharedArray(Uint32Array, venues.length + 1);
  for (let e = 0; e < eventCount; e++) {
    const c = eventRow[e] ?? outOfRange(eventRow, e, "eventRow");
    const row = c < 0 ? -1 : (rowOfColumn[c] ?? outOfRange(rowOfColumn, c, "rowOfColumn"));
    eventRow[e] = row;
    if (row >= 0)
      venueEvents[row + 1] = (venueEvents[row + 1] ?? outOfRange(venueEvents, row + 1, "venueEvents")) + 1;
  }
  for (let v = 0; v < venues.length; v++)
    venueEvents[v + 1] =
      (venueEvents[v + 1] ?? outOfRange(venueEvents, v + 1, "venueEvents")) +
      (venueEvents[v] ?? outOfRange(venueEvents, v, "venueEvents"));
  const venueId = sharedArray(Int32Array, venues.length);
  const venueRecord = sharedArray(Float64Array, venues.length * VENUE_STRIDE);
  venues.forEach((c, v) => {
    const latitude = columns.venueLatitudes[c] ?? outOfRange(columns.venueLatitudes, c, "venueLatitudes");
    const longitude = columns.venueLongitudes[c] ?? outOfRange(columns.venueLongitudes, c, "venueLongitudes");
    const radius = columns.venueRadii[c] ?? outOfRange(columns.venueRadii, c, "venueRadii");
    const radiusM = venueRadius(radius, settings);
    const cosLat = Math.cos(latitude * RAD);
    venueId[v] = columns.venueIds[c] ?? outOfRange(columns.venueIds, c, "venueIds");
    venueRecord.set(
      [
        cosLat * Math.cos(longitude * RAD),
        cosLat * Math.sin(longitude * RAD),
        Math.sin(latitude * RAD),
        reachableChordSquared(radiusM),
        latitude,
        longitude,
        radiusM,
        spans[c] ?? outOfRange(spans, c, "spans"),
      ],
      v * VENUE_STRIDE,
    );
  });
  return { venueId, venueRecord, venueEvents, windows, eventRow };
}

/** Lays the events out venue by venue, each venue's by window start, in shared memory. */
export function layoutEvents(columns: CatalogColumns, plan: VenuePlan): EventSections {
  const { windows, eventRow, venueEvents } = plan;
  const venueCount = venueEvents.length - 1;
  const kept = venueEvents[venueCount] ?? outOfRange(venueEvents, venueCount, "venueEvents");
  // (venue, window start) order: a radix sort by start, then a stable counting pass by venue. Among
  // equal starts the order is free: the search compares every open window in full.
  const byStart = new Uint32Array(kept);
  const startKeys = new Float64Array(kept);
  let minFrom = Number.POSITIVE_INFINITY;
  let maxFrom = Number.NEGATIVE_INFINITY;
  for (let e = 0, k = 0; e < eventRow.length; e++) {
    if ((eventRow[e] ?? outOfRange(eventRow, e, "eventRow")) < 0) continue;
    minFrom = Math.min(minFrom, windows[e * 2] ?? outOfRange(windows, e * 2, "windows"));
    maxFrom = Math.max(maxFrom, windows[e * 2] ?? outOfRange(windows, e * 2, "windows"));
    byStart[k++] = e;
  }
  for (let k = 0; k < kept; k++)
    startKeys[k] =
      (windows[(byStart[k] ?? outOfRange(byStart, k, "byStart")) * 2] ??
        outOfRange(windows, (byStart[k] ?? outOfRange(byStart, k, "byStart")) * 2, "windows")) - minFrom;
  const byKey = radixSort(byStart, startKeys, maxFrom - minFrom);
  const order = new Uint32Array(kept);
  const fill = venueEvents.slice(0, venueCount);
  for (let k = 0; k < kept; k++) {
    const e = byKey[k] ?? outOfRange(byKey, k, "byKey");
    const row = eventRow[e] ?? outOfRange(eventRow, e, "eventRow");
    order[fill[row] ?? outOfRange(fill, row, "fill")] = e;
    fill[row] = (fill[row] ?? outOfRange(fill, row, "fill")) + 1;
  }
  const sections: EventSections = {
    eventWindow: sharedArray(Float64Array, kept * 2),
    eventSample: sharedArray(Float64Array, Math.ceil(kept / SAMPLE_EVERY)),
    eventId: sharedArray(Int32Array, kept),
    eventLicensed: sharedArray(Uint32Array, Math.ceil(kept / 32)),
  };
  const { eventWindow, eventSample, eventId, eventLicensed } = sections;
  const { eventIds, eventLicensed: licensed } = columns;
  for (let row = 0; row < kept; row++) {
    const e = order[row] ?? outOfRange(order, row, "order");
    const from = windows[e * 2] ?? outOfRange(windows, e * 2, "windows");
    eventWindow[row * 2] = from;
    eventWindow[row * 2 + 1] = windows[e * 2 + 1] ?? outOfRange(windows, e * 2 + 1, "windows");
    if (row % SAMPLE_EVERY === 0) eventSample[row / SAMPLE_EVERY] = from;
    eventId[row] = eventIds[e] ?? outOfRange(eventIds, e, "eventIds");
    if ((licensed[e] ?? outOfRange(licensed, e, "eventLicensed")) === 1)
      eventLicensed[row >>> 5] =
        (eventLicensed[row >>> 5] ?? outOfRange(eventLicensed, row >>> 5, "eventLicensed")) |
        (1 << (row & 31));
  }
  return sections;
}
