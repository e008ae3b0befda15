import { cellKey, findSlot } from "./cells.ts";
import { haversineMeters } from "./geo.ts";
import {
  blockOf,
  capBox,
  fineCellRadii,
  fineCentre,
  fineRank,
  GRID_ROWS,
  POLAR_CELL_LATITUDE,
  wrapColumn,
} from "./grid.ts";
import { sharedArray } from "./layout.ts";
import { outOfRange } from "./outOfRange.ts";

/**
 * What a query finds in fineSlot for its fine cell:
 * - a slot (>= 0): the fine cell lies wholly inside that H3 cell; scan its venues;
 * - a list (FIRST_LIST - offset): the fine cell straddles H3 cells; scan the venues of every indexed
 *   cell it overlaps (slotLists[offset] = count, then the slots);
 * Fine cells in the polar rows (isPolarRow) are not resolved here, whatever fineSlot holds: queries
 * there ask h3-js for their cell (ASK_H3), because cells near a pole are left out of the lists.
 * Either way the answer never depends on the grid: the haversine test decides, the grid only picks
 * which of the H3 index's venue lists can hold the answer.
 */
export const ASK_H3 = -1;
export const FIRST_LIST = -2;

export type MemoSections = { fineSlot: Int32Array; slotLists: Int32Array };

export type MemoCell = { cell: string; latitude: number; longitude: number; innerM: number; reachM: number };

type Grid = {
  blockSlot: Int32Array;
  blockShard: Uint16Array;
  fineWords: Uint32Array;
  slotCell: Uint32Array;
  shardSlots: Uint32Array;
};

/** A growable list of (fine cell, slot) overlaps, in typed arrays: there are millions at 10M events. */
class Overlaps {
  ranks = new Uint32Array(1 << 16);
  slots = new Int32Array(1 << 16);
  length = 0;

  push(rank: number, slot: number): void {
    if (this.length === this.ranks.length) {
      const ranks = new Uint32Array(this.length * 2);
      ranks.set(this.ranks);
      this.ranks = ranks;
      const slots = new Int32Array(this.length * 2);
      slots.set(this.slots);
      this.slots = slots;
    }
    this.ranks[this.length] = rank;
    this.slots[this.length++] = slot;
  }
}

/** Calls visit(rank, row, column) for every marked fine cell of a box. */
function eachMarked(
  grid: Grid,
  firstRow: number,
  lastRow: number,
  firstColumn: number,
  lastColumn: number,
  visit: (rank: number, row: number, column: number, block: number) => void,
): void {
  for (let row = firstRow; row <= lastRow; row++) {
    for (let unwrapped = firstColumn; unwrapped <= lastColumn; unwrapped++) {
      const column = wrapColumn(unwrapped);
      const block =
        grid.blockSlot[blockOf(row, column)] ?? outOfRange(grid.blockSlot, blockOf(row, column), "blockSlot");
      if (block < 0) continue;
      const rank = fineRank(grid.fineWords, block, row, column);
      if (rank >= 0) visit(rank, row, column, block);
    }
  }
}

/**
 * Resolves each marked fine cell to the H3 index's venue lists that can answer for it, so queries skip
 * h3-js (the largest cost of a lookup). A fine cell whose every point is within
 * an H3 cell's inner disc gets that cell's slot; any other gets the slots of every indexed cell whose
 * reach disc it touches, which include the cell of any point in it.
 */
export function buildMemoSections(cells: MemoCell[], marked: number, grid: Grid): MemoSections {
  const fineSlot = sharedArray(Int32Array, marked).fill(FIRST_LIST);
  // Sized like fineSlot, which sharedArray pads to one element when no fine cell is marked.
  const inside = new Uint8Array(fineSlot.length);
  const overlaps = new Overlaps();
  const radii = fineCellRadii();
  // Fine cells are widest at the equator; boxes use that bound, and the exact row radius filters.
  const widest = radii[GRID_ROWS / 2] ?? outOfRange(radii, GRID_ROWS / 2, "radii");
  for (const cell of cells) {
    // Cells near a pole span thousands of columns; queries there ask h3-js instead (see isPolarRow).
    if (Math.abs(cell.latitude) > POLAR_CELL_LATITUDE) continue;
    const { low, high } = cellKey(cell.cell);
    const box = capBox(cell.latitude, cell.longitude, cell.reachM + widest);
    eachMarked(
      grid,
      box.firstRow,
      box.lastRow,
      box.firstColumn,
      box.lastColumn,
      (rank, row, column, block) => {
        const radius = radii[row] ?? outOfRange(radii, row, "radii");
        const distance = haversineMeters(
          cell.latitude,
          cell.longitude,
          fineCentre(row, 90),
          fineCentre(column, 180),
        );
        if (distance > cell.reachM + radius) return;
        const slot = findSlot(
          grid.slotCell,
          grid.shardSlots,
          grid.blockShard[block] ?? outOfRange(grid.blockShard, block, "blockShard"),
          low,
          high,
        );
        // Not in this block's shard: the cell does not reach the block, so it cannot hold the fine cell.
        if (slot < 0) return;
        if (distance + radius <= cell.innerM) {
          inside[rank] = 1;
          fineSlot[rank] = slot;
        } else {
          overlaps.push(rank, slot);
        }
      },
    );
  }
  const slotLists = listOverlaps(fineSlot, inside, overlaps);
  return { fineSlot, slotLists };
}

/**
 * Groups the overlaps by fine cell (a counting sort) and stores each distinct set of slots once: the
 * fine cells along one edge between two H3 cells all share the same pair.
 */
function listOverlaps(fineSlot: Int32Array, inside: Uint8Array, overlaps: Overlaps): Int32Array {
  const starts = new Uint32Array(fineSlot.length + 1);
  for (let i = 0; i < overlaps.length; i++) {
    const rank = overlaps.ranks[i] ?? outOfRange(overlaps.ranks, i, "ranks");
    starts[rank + 1] = (starts[rank + 1] ?? outOfRange(starts, rank + 1, "starts")) + 1;
  }
  for (let rank = 0; rank < fineSlot.length; rank++)
    starts[rank + 1] =
      (starts[rank + 1] ?? outOfRange(starts, rank + 1, "starts")) +
      (starts[rank] ?? outOfRange(starts, rank, "starts"));
  const grouped = new Int32Array(overlaps.length);
  const fill = starts.slice(0, fineSlot.length);
  for (let i = 0; i < overlaps.length; i++) {
    const rank = overlaps.ranks[i] ?? outOfRange(overlaps.ranks, i, "ranks");
    grouped[fill[rank] ?? outOfRange(fill, rank, "fill")] =
      overlaps.slots[i] ?? outOfRange(overlaps.slots, i, "slots");
    fill[rank] = (fill[rank] ?? outOfRange(fill, rank, "fill")) + 1;
  }
  // Offset 0 holds the empty list, for fine cells no indexed cell reaches.
  const lists: number[] = [0];
  const known = new Map<string, number>([["", 0]]);
  for (let rank = 0; rank < fineSlot.length; rank++) {
    const first = starts[rank] ?? outOfRange(starts, rank, "starts");
    const end = starts[rank + 1] ?? outOfRange(starts, rank + 1, "starts");
    // Cells wholly inside one H3 cell have their slot; cells no indexed cell reaches keep the empty list.
    if ((inside[rank] ?? outOfRange(inside, rank, "inside")) === 1 || first === end) continue;
    const slots: number[] = [];
    for (let i = first; i < end; i++) slots.push(grouped[i] ?? outOfRange(grouped, i, "grouped"));
    slots.sort((x, y) => x - y);
    const key = slots.join(",");
    let offset = known.get(key);
    if (offset === undefined) {
      offset = lists.length;
      known.set(key, offset);
      lists.push(slots.length, ...slots);
    }
    fineSlot[rank] = FIRST_LIST - offset;
  }
  const slotLists = sharedArray(Int32Array, lists.length);
  slotLists.set(lists);
  return slotLists;
}
