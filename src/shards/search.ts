import { ASK_H3, FIRST_LIST } from "./buildMemo.ts";
import { cellKey, findSlot, queryCell } from "./cells.ts";
import { haversineMeters } from "./geo.ts";
import { blockOf, fineRank, gridColumn, gridRow, isPolarRow } from "./grid.ts";
import {
  type IndexArrays,
  type IndexBuffers,
  SAMPLE_EVERY,
  VENUE_CHORD2,
  VENUE_LATITUDE,
  VENUE_LONGITUDE,
  VENUE_RADIUS,
  VENUE_SPAN,
  VENUE_STRIDE,
  VENUE_X,
  VENUE_Y,
  VENUE_Z,
  viewIndex,
} from "./layout.ts";
import { outOfRange } from "./outOfRange.ts";
import { candidateScore, ranksBefore, timeGap } from "./score.ts";

const RAD = Math.PI / 180;

/** route(): no venue can reach the point, so the answer is null and no task is needed. */
export const UNREACHABLE = -1;

/**
 * The matching rule (docs/api.md §5) over one index generation. Runs on the main thread
 * (WORKERS=0, and for routing) and in every worker, over the same shared arrays.
 */
export class IndexReader {
  readonly arrays: IndexArrays;
  private readonly beforeMs: number;
  private readonly afterMs: number;
  /** The query's unit vector and the best candidate so far: scratch for one best() call. */
  private readonly found = { x: 0, y: 0, z: 0, row: -1, score: 0, gap: 0, distance: 0, id: 0, venue: 0 };

  constructor(readonly buffers: IndexBuffers) {
    this.arrays = viewIndex(buffers);
    this.beforeMs = buffers.beforeMs;
    this.afterMs = buffers.afterMs;
  }

  /** The shard that answers for a point, or UNREACHABLE when the grid shows no venue reaches it. */
  route(latitude: number, longitude: number): number {
    const { blockSlot, blockShard, fineWords } = this.arrays;
    const row = gridRow(latitude);
    const column = gridColumn(longitude);
    const cell = blockOf(row, column);
    const block = blockSlot[cell] ?? outOfRange(blockSlot, cell, "blockSlot");
    if (block < 0) return UNREACHABLE;
    if (fineRank(fineWords, block, row, column) < 0) return UNREACHABLE;
    return blockShard[block] ?? outOfRange(blockShard, block, "blockShard");
  }

  /**
   * The best event row for a capture, or -1; its venue row is then in `found.venue`, so no per-event
   * venue column is needed. The grid picks the H3 index's venue lists that can hold the answer (see
   * buildMemo.ts); only near the poles does h3-js decide.
   */
  private best(latitude: number, longitude: number, takenAtMs: number): number {
    const a = this.arrays;
    const row = gridRow(latitude);
    const column = gridColumn(longitude);
    const cell = blockOf(row, column);
    const block = a.blockSlot[cell] ?? outOfRange(a.blockSlot, cell, "blockSlot");
    if (block < 0) return -1;
    const rank = fineRank(a.fineWords, block, row, column);
    if (rank < 0) return -1;
    const known = isPolarRow(row) ? ASK_H3 : (a.fineSlot[rank] ?? outOfRange(a.fineSlot, rank, "fineSlot"));
    const cosLat = Math.cos(latitude * RAD);
    const found = this.found;
    found.row = -1;
    found.x = cosLat * Math.cos(longitude * RAD);
    found.y = cosLat * Math.sin(longitude * RAD);
    found.z = Math.sin(latitude * RAD);
    if (known >= 0) {
      this.scan(known, latitude, longitude, takenAtMs);
    } else if (known === ASK_H3) {
      const { low, high } = cellKey(queryCell(latitude, longitude));
      const slot = findSlot(
        a.slotCell,
        a.shardSlots,
        a.blockShard[block] ?? outOfRange(a.blockShard, block, "blockShard"),
        low,
        high,
      );
      if (slot >= 0) this.scan(slot, latitude, longitude, takenAtMs);
    } else {
      const offset = FIRST_LIST - known;
      const count = a.slotLists[offset] ?? outOfRange(a.slotLists, offset, "slotLists");
      for (let i = 1; i <= count; i++)
        this.scan(
          a.slotLists[offset + i] ?? outOfRange(a.slotLists, offset + i, "slotLists"),
          latitude,
          longitude,
          takenAtMs,
        );
    }
    return found.row;
  }

  /**
   * Folds the venues of one hash slot into `found`. A venue seen twice (lists of overlapping cells
   * share venues) compares equal to itself and changes nothing.
   */
  private scan(slot: number, latitude: number, longitude: number, takenAtMs: number): void {
    const { slotVenues, cellVenues, venueRecord, venueEvents, eventWindow, eventId } = this.arrays;
    const found = this.found;
    const runFirst = slotVenues[slot * 2] ?? outOfRange(slotVenues, slot * 2, "slotVenues");
    const runEnd =
      runFirst + (slotVenues[slot * 2 + 1] ?? outOfRange(slotVenues, slot * 2 + 1, "slotVenues"));
    for (let r = runFirst; r < runEnd; r++) {
      const v = cellVenues[r] ?? outOfRange(cellVenues, r, "cellVenues");
      const record = v * VENUE_STRIDE;
      // One check for the whole record (v is an integer): its fields are read unchecked below.
      if (!(v >= 0 && record + VENUE_STRIDE <= venueRecord.length))
        outOfRange(venueRecord, record, "venueRecord");
      const dx = found.x - (venueRecord[record + VENUE_X] as number);
      const dy = found.y - (venueRecord[record + VENUE_Y] as number);
      const dz = found.z - (venueRecord[record + VENUE_Z] as number);
      if (dx * dx + dy * dy + dz * dz > (venueRecord[record + VENUE_CHORD2] as number)) continue;
      const distance = haversineMeters(
        latitude,
        longitude,
        venueRecord[record + VENUE_LATITUDE] as number,
        venueRecord[record + VENUE_LONGITUDE] as number,
      );
      const radius = venueRecord[record + VENUE_RADIUS] as number;
      if (distance > radius) continue;
      const reach = distance / radius;
      const oldestFrom = takenAtMs - (venueRecord[record + VENUE_SPAN] as number);
      const first = venueEvents[v] ?? outOfRange(venueEvents, v, "venueEvents");
      const stop = venueEvents[v + 1] ?? outOfRange(venueEvents, v + 1, "venueEvents");
      // Rows before openedBy(...) open by takenAtMs; walk back while a window could still be open.
      for (let e = this.openedBy(first, stop, takenAtMs) - 1; e >= first; e--) {
        const from = eventWindow[e * 2] ?? outOfRange(eventWindow, e * 2, "eventWindow");
        if (from < oldestFrom) break;
        const to = eventWindow[e * 2 + 1] ?? outOfRange(eventWindow, e * 2 + 1, "eventWindow");
        if (takenAtMs > to) continue;
        const start = from + this.beforeMs;
        const end = to - this.afterMs;
        const gap = timeGap(takenAtMs, start, end);
        const score = candidateScore(reach, takenAtMs, start, end, this.beforeMs, this.afterMs);
        const id = eventId[e] ?? outOfRange(eventId, e, "eventId");
        if (found.row < 0 || ranksBefore(score, gap, distance, id, found)) {
          found.row = e;
          found.score = score;
          found.gap = gap;
          found.distance = distance;
          found.id = id;
          found.venue = v;
        }
      }
    }
  }

  /**
   * First row in [first, end) whose window opens after `instant`: a binary search over the run's
   * samples narrows it to one group of SAMPLE_EVERY rows, scanned in order.
   */
  private openedBy(first: number, end: number, instant: number): number {
    const { eventSample, eventWindow } = this.arrays;
    // Samples k cover rows k * SAMPLE_EVERY; those inside the run are firstSample .. endSample - 1.
    let low = Math.ceil(first / SAMPLE_EVERY);
    let high = Math.ceil(end / SAMPLE_EVERY);
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((eventSample[middle] ?? outOfRange(eventSample, middle, "eventSample")) <= instant)
        low = middle + 1;
      else high = middle;
    }
    // Rows before sample `low` (if it is in the run) may open by `instant`; rows from it on do not.
    let row = Math.max(first, (low - 1) * SAMPLE_EVERY);
    const stop = Math.min(end, low * SAMPLE_EVERY);
    while (row < stop && (eventWindow[row * 2] ?? outOfRange(eventWindow, row * 2, "eventWindow")) <= instant)
      row++;
    return row;
  }

  /**
   * Matches `count` captures packed as (latitude, longitude, takenAtMs) triples; writes (event row,
   * venue row) pairs, -1 for no candidate. The shared shape of inline matching and of a worker task.
   */
  matchPacked(captures: Float64Array, count: number, out: Int32Array): void {
    for (let i = 0; i < count; i++) {
      const row = this.best(
        captures[i * 3] ?? outOfRange(captures, i * 3, "captures"),
        captures[i * 3 + 1] ?? outOfRange(captures, i * 3 + 1, "captures"),
        captures[i * 3 + 2] ?? outOfRange(captures, i * 3 + 2, "captures"),
      );
      out[i * 2] = row;
      out[i * 2 + 1] = row < 0 ? -1 : this.found.venue;
    }
  }
}
