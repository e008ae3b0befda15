import { buildMemoSections, type MemoCell, type MemoSections } from "./buildMemo.ts";
import { CellAtlas, cellHash, cellKey } from "./cells.ts";
import { haversineMeters } from "./geo.ts";
import {
  BLOCK_COLUMNS,
  bitOf,
  blockOf,
  CELL_SHIFT,
  CELLS_PER_DEGREE,
  capBox,
  fineCellRadii,
  fineCentre,
  GRID_COLUMNS,
  type GridBox,
  PAIR_STRIDE,
  packFineWords,
  WORDS_PER_BLOCK,
  wrapColumn,
} from "./grid.ts";
import { sharedArray, VENUE_LATITUDE, VENUE_LONGITUDE, VENUE_RADIUS, VENUE_STRIDE } from "./layout.ts";
import { outOfRange } from "./outOfRange.ts";

/** Geometry cache entries kept before a reset: about 100 MB at the worst. */
const ATLAS_LIMIT = 400_000;

export type CellSections = MemoSections & {
  cellVenues: Int32Array;
  slotCell: Uint32Array;
  slotVenues: Uint32Array;
  shardSlots: Uint32Array;
  blockSlot: Int32Array;
  blockShard: Uint16Array;
  fineWords: Uint32Array;
};

type CellEntry = MemoCell & { venues: number[]; blocks: number[] };

/** 1-degree blocks a grid box touches (before knowing which of them any venue reaches). */
function blocksOf(box: GridBox): number[] {
  const blocks: number[] = [];
  const firstBlockColumn = Math.floor(box.firstColumn / CELLS_PER_DEGREE);
  const lastBlockColumn = Math.floor(box.lastColumn / CELLS_PER_DEGREE);
  const columns = Math.min(BLOCK_COLUMNS, lastBlockColumn - firstBlockColumn + 1);
  for (let blockRow = box.firstRow >> CELL_SHIFT; blockRow <= box.lastRow >> CELL_SHIFT; blockRow++) {
    for (let i = 0; i < columns; i++) {
      blocks.push(
        blockRow * BLOCK_COLUMNS + wrapColumn((firstBlockColumn + i) * CELLS_PER_DEGREE) / CELLS_PER_DEGREE,
      );
    }
  }
  return blocks;
}

function maskOf(masks: Map<number, Uint32Array>, block: number): Uint32Array {
  let mask = masks.get(block);
  if (mask === undefined) {
    mask = new Uint32Array(WORDS_PER_BLOCK);
    masks.set(block, mask);
  }
  return mask;
}

/**
 * Sets the fine-grid bits of the cells a venue reaches: those in its box whose centre is within the
 * radius plus the cell's own radius (any point of the cell within the radius passes that test, by the
 * triangle inequality). A box near a pole spans a wide arc of longitude: its rows are marked all the
 * way round, a word at a time (marking more than needed only sends more captures to the exact test).
 */
function markReach(
  masks: Map<number, Uint32Array>,
  latitude: number,
  longitude: number,
  radiusM: number,
  fineRadii: Float64Array,
): void {
  const box = capBox(latitude, longitude, radiusM);
  const everyColumn = box.lastColumn - box.firstColumn + 1 >= GRID_COLUMNS / 4;
  for (let row = box.firstRow; row <= box.lastRow; row++) {
    if (everyColumn) {
      const firstWord = (row & (CELLS_PER_DEGREE - 1)) * (CELLS_PER_DEGREE / 32);
      for (let blockColumn = 0; blockColumn < BLOCK_COLUMNS; blockColumn++) {
        maskOf(masks, blockOf(row, blockColumn * CELLS_PER_DEGREE)).fill(
          0xffffffff,
          firstWord,
          firstWord + CELLS_PER_DEGREE / 32,
        );
      }
      continue;
    }
    const reach = (radiusM + (fineRadii[row] ?? outOfRange(fineRadii, row, "fineRadii"))) * (1 + 1e-9) + 1e-3;
    const fineLatitude = fineCentre(row, 90);
    for (let unwrapped = box.firstColumn; unwrapped <= box.lastColumn; unwrapped++) {
      const column = wrapColumn(unwrapped);
      if (haversineMeters(latitude, longitude, fineLatitude, fineCentre(column, 180)) > reach) continue;
      const mask = maskOf(masks, blockOf(row, column));
      const bit = bitOf(row, column);
      mask[bit >>> 5] = (mask[bit >>> 5] ?? outOfRange(mask, bit >>> 5, "mask")) | (1 << (bit & 31));
    }
  }
}

/**
 * Longest-processing-time assignment: blocks by load, heaviest first, each to the least loaded shard.
 * Deterministic for a catalog, so every process builds the same partition.
 */
function assignShards(blocks: number[], load: Map<number, number>, shards: number): Map<number, number> {
  const shardLoad = new Float64Array(shards);
  // A block that no cell reaches has no entry in `load`: its load is 0, not a failed read.
  const byLoad = [...blocks].sort((x, y) => (load.get(y) ?? 0) - (load.get(x) ?? 0) || x - y);
  const shardOf = new Map<number, number>();
  for (const block of byLoad) {
    let lightest = 0;
    let least = shardLoad[0] ?? outOfRange(shardLoad, 0, "shardLoad");
    for (let s = 1; s < shardLoad.length; s++) {
      const sLoad = shardLoad[s] as number; // s < shardLoad.length, the loop's bound
      if (sLoad < least) [lightest, least] = [s, sLoad];
    }
    shardOf.set(block, lightest);
    shardLoad[lightest] = least + (load.get(block) ?? 0) + 1;
  }
  return shardOf;
}

/** One open-addressing table per shard, laid end to end; each at most half full. */
function fillTables(
  entries: CellEntry[],
  runFirst: Uint32Array,
  shardOfBlock: Map<number, number>,
  shards: number,
) {
  const members: number[][] = Array.from({ length: shards }, () => []);
  entries.forEach((entry, i) => {
    const entryShards = new Set<number>();
    for (const block of entry.blocks) {
      const shard = shardOfBlock.get(block);
      if (shard !== undefined) entryShards.add(shard);
    }
    for (const shard of entryShards) members[shard]?.push(i);
  });
  const shardSlots = sharedArray(Uint32Array, shards * 2);
  let total = 0;
  members.forEach((list, s) => {
    let capacity = 2;
    while (capacity < list.length * 2) capacity *= 2;
    shardSlots[s * 2] = total;
    shardSlots[s * 2 + 1] = capacity - 1;
    total += capacity;
  });
  const slotCell = sharedArray(Uint32Array, total * 2);
  const slotVenues = sharedArray(Uint32Array, total * 2);
  members.forEach((list, s) => {
    const first = shardSlots[s * 2] ?? outOfRange(shardSlots, s * 2, "shardSlots");
    const mask = shardSlots[s * 2 + 1] ?? outOfRange(shardSlots, s * 2 + 1, "shardSlots");
    for (const i of list) {
      const entry = entries[i];
      if (entry === undefined) continue;
      const { low, high } = cellKey(entry.cell);
      let slot = cellHash(low, high) & mask;
      while (
        (slotCell[(first + slot) * 2 + 1] ?? outOfRange(slotCell, (first + slot) * 2 + 1, "slotCell")) !== 0
      )
        slot = (slot + 1) & mask;
      slotCell.set([low, high], (first + slot) * 2);
      slotVenues.set(
        [runFirst[i] ?? outOfRange(runFirst, i, "runFirst"), entry.venues.length],
        (first + slot) * 2,
      );
    }
  });
  return { shardSlots, slotCell, slotVenues };
}

/**
 * Registers every venue in every H3 cell its radius reaches, marks the venues' boxes on the grid,
 * partitions the grid's blocks into shards by load, and builds each shard's cell table.
 */
export function buildCellSections(venueRecord: Float64Array, shards: number): CellSections {
  const atlas = new CellAtlas();
  const entries = new Map<string, CellEntry>();
  const masks = new Map<number, Uint32Array>();
  const fineRadii = fineCellRadii();
  // Rounded down: sharedArray gives a catalog without venues one element, not a record.
  const venues = Math.floor(venueRecord.length / VENUE_STRIDE);
  for (let v = 0; v < venues; v++) {
    const latitude =
      venueRecord[v * VENUE_STRIDE + VENUE_LATITUDE] ??
      outOfRange(venueRecord, v * VENUE_STRIDE + VENUE_LATITUDE, "venueRecord");
    const longitude =
      venueRecord[v * VENUE_STRIDE + VENUE_LONGITUDE] ??
      outOfRange(venueRecord, v * VENUE_STRIDE + VENUE_LONGITUDE, "venueRecord");
    const radiusM =
      venueRecord[v * VENUE_STRIDE + VENUE_RADIUS] ??
      outOfRange(venueRecord, v * VENUE_STRIDE + VENUE_RADIUS, "venueRecord");
    markReach(masks, latitude, longitude, radiusM, fineRadii);
    for (const cell of atlas.reachableCells(latitude, longitude, radiusM)) {
      let entry = entries.get(cell);
      if (entry === undefined) {
        const geometry = atlas.geometry(cell);
        entry = {
          cell,
          latitude: geometry.latitude,
          longitude: geometry.longitude,
          innerM: geometry.innerM,
          reachM: geometry.reachM,
          venues: [],
          blocks: blocksOf(capBox(geometry.latitude, geometry.longitude, geometry.reachM)),
        };
        entries.set(cell, entry);
      }
      entry.venues.push(v);
    }
    atlas.trim(ATLAS_LIMIT);
  }

  const blocks = [...masks.keys()].sort((x, y) => x - y);
  const blockSlot = sharedArray(Int32Array, 180 * BLOCK_COLUMNS).fill(-1);
  const fineWords = sharedArray(Uint32Array, (blocks.length * WORDS_PER_BLOCK * PAIR_STRIDE) / 2);
  blocks.forEach((block, slot) => {
    blockSlot[block] = slot;
  });
  const marked = packFineWords(
    blocks.map((block) => masks.get(block) ?? new Uint32Array(WORDS_PER_BLOCK)),
    fineWords,
  );

  const list = [...entries.values()];
  const load = new Map<number, number>();
  const runFirst = new Uint32Array(list.length);
  let registrations = 0;
  list.forEach((entry, i) => {
    entry.blocks = entry.blocks.filter((block) => masks.has(block));
    for (const block of entry.blocks) load.set(block, (load.get(block) ?? 0) + entry.venues.length);
    runFirst[i] = registrations;
    registrations += entry.venues.length;
  });
  const cellVenues = sharedArray(Int32Array, registrations);
  list.forEach((entry, i) => {
    cellVenues.set(entry.venues, runFirst[i] ?? outOfRange(runFirst, i, "runFirst"));
  });
  const shardOfBlock = assignShards(blocks, load, shards);
  const blockShard = sharedArray(Uint16Array, blocks.length);
  blocks.forEach((block, slot) => {
    const shard = shardOfBlock.get(block);
    if (shard === undefined) throw new Error(`block ${block} was given no shard`);
    blockShard[slot] = shard;
  });
  const tables = fillTables(list, runFirst, shardOfBlock, shards);
  const memo = buildMemoSections(list, marked, { blockSlot, blockShard, fineWords, ...tables });
  return { cellVenues, blockSlot, blockShard, fineWords, ...tables, ...memo };
}
