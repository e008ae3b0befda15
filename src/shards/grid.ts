import { EARTH_RADIUS_M, haversineMeters } from "./geo.ts";
import { outOfRange } from "./outOfRange.ts";

/**
 * A fixed latitude/longitude grid that answers "can any venue reach this point at all?" without H3,
 * and routes a point to its shard. Fine cells are 1/256 degree (about 430 m of latitude), fine enough
 * that most captures away from venues are answered here; 256 x 256 of them form a 1-degree block.
 * Points are placed with floor() on `(deg + offset) * 256`: adding and multiplying by a power of two
 * are monotone in floating point, so a point inside a venue's bounding box always lands in a cell the
 * box covers. That, and generous margins wherever trigonometry bounds a distance, keep the grid exact:
 * it may send a capture on to the haversine test needlessly, never hold one back.
 */

/** log2 of fine cells per degree. */
export const CELL_SHIFT = 8;
export const CELLS_PER_DEGREE = 1 << CELL_SHIFT;
export const GRID_ROWS = 180 * CELLS_PER_DEGREE;
export const GRID_COLUMNS = 360 * CELLS_PER_DEGREE;
export const BLOCK_COLUMNS = 360;
/** One bit per fine cell of a block: 256 x 256 bits = 2048 words. */
export const WORDS_PER_BLOCK = (CELLS_PER_DEGREE * CELLS_PER_DEGREE) / 32;

const DEG = 180 / Math.PI;
/**
 * Margins that make a box a little larger than the cap it bounds, so rounding in the trigonometry
 * can never leave out a point the haversine check would accept. They only cost a few extra cells.
 */
const RELATIVE_SLACK = 1e-4;
const ABSOLUTE_SLACK_RAD = 1e-9;

export function gridRow(latitude: number): number {
  const row = Math.floor((latitude + 90) * CELLS_PER_DEGREE);
  return row < 0 ? 0 : row >= GRID_ROWS ? GRID_ROWS - 1 : row;
}

/** Longitudes 180 and -180 are one meridian: both land in column 0. */
export function gridColumn(longitude: number): number {
  const column = Math.floor((longitude + 180) * CELLS_PER_DEGREE) % GRID_COLUMNS;
  return column < 0 ? column + GRID_COLUMNS : column;
}

export function blockOf(row: number, column: number): number {
  return (row >> CELL_SHIFT) * BLOCK_COLUMNS + (column >> CELL_SHIFT);
}

/** Position of a fine cell inside its block's bit mask. */
export function bitOf(row: number, column: number): number {
  return ((row & (CELLS_PER_DEGREE - 1)) << CELL_SHIFT) | (column & (CELLS_PER_DEGREE - 1));
}

/**
 * Grid rows and columns covering every point within `radiusM` of a centre. The column range is
 * unwrapped (it may run past either end near the antimeridian; reduce with wrapColumn); a cap that
 * reaches a pole or is wider than the globe gets every column.
 */
export type GridBox = { firstRow: number; lastRow: number; firstColumn: number; lastColumn: number };

export function capBox(latitude: number, longitude: number, radiusM: number): GridBox {
  const angle = (radiusM / EARTH_RADIUS_M) * (1 + RELATIVE_SLACK) + ABSOLUTE_SLACK_RAD;
  const dLat = angle * DEG;
  const south = latitude - dLat;
  const north = latitude + dLat;
  const ratio = Math.sin(angle) / Math.cos(latitude / DEG);
  const all = { firstColumn: 0, lastColumn: GRID_COLUMNS - 1 };
  if (south <= -90 || north >= 90 || !(ratio < 1)) {
    return { firstRow: gridRow(south), lastRow: gridRow(north), ...all };
  }
  const dLng = Math.asin(ratio) * DEG * (1 + RELATIVE_SLACK) + ABSOLUTE_SLACK_RAD * DEG;
  if (dLng >= 180) return { firstRow: gridRow(south), lastRow: gridRow(north), ...all };
  // One spare column each side: a point across the antimeridian is placed from its own longitude, and
  // that sum may round differently from the box's unwrapped one.
  const firstColumn = Math.floor((longitude - dLng + 180) * CELLS_PER_DEGREE) - 1;
  const lastColumn = Math.floor((longitude + dLng + 180) * CELLS_PER_DEGREE) + 1;
  if (lastColumn - firstColumn >= GRID_COLUMNS - 1)
    return { firstRow: gridRow(south), lastRow: gridRow(north), ...all };
  return { firstRow: gridRow(south), lastRow: gridRow(north), firstColumn, lastColumn };
}

/** Reduces an unwrapped column of a GridBox to the grid. */
export function wrapColumn(column: number): number {
  const wrapped = column % GRID_COLUMNS;
  return wrapped < 0 ? wrapped + GRID_COLUMNS : wrapped;
}

/** Set bits in a 32-bit word (SWAR): how a fine cell finds its rank among the marked cells of a block. */
export function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Latitude (offset 90) or longitude (offset 180) of the centre of a fine row or column. */
export function fineCentre(index: number, offset: number): number {
  return (index + 0.5) / CELLS_PER_DEGREE - offset;
}

/**
 * Largest distance from a fine cell's centre to any of its points, per grid row (it depends only on
 * latitude), with slack for the curvature of parallels.
 */
let fineRadii: Float64Array | null = null;

export function fineCellRadii(): Float64Array {
  fineRadii ??= computeFineCellRadii();
  return fineRadii;
}

function computeFineCellRadii(): Float64Array {
  const radii = new Float64Array(GRID_ROWS);
  const size = 1 / CELLS_PER_DEGREE;
  for (let row = 0; row < GRID_ROWS; row++) {
    const south = row * size - 90;
    const centre = south + size / 2;
    const corner = Math.max(
      haversineMeters(centre, 0, south, size / 2),
      haversineMeters(centre, 0, south + size, size / 2),
    );
    radii[row] = corner * 1.01 + 1;
  }
  return radii;
}

/**
 * fineWords packs each pair of 32-cell mask words with the number of marked cells before the pair:
 * (bits, bits, rank), 12 bytes per 64 cells, so a lookup reads one cache line.
 */
export const PAIR_STRIDE = 3;

export function packFineWords(masks: Uint32Array[], into: Uint32Array): number {
  let marked = 0;
  masks.forEach((mask, block) => {
    for (let pair = 0; pair < WORDS_PER_BLOCK / 2; pair++) {
      const place = (block * (WORDS_PER_BLOCK / 2) + pair) * PAIR_STRIDE;
      const low = mask[pair * 2] ?? outOfRange(mask, pair * 2, "mask");
      const high = mask[pair * 2 + 1] ?? outOfRange(mask, pair * 2 + 1, "mask");
      into[place] = low;
      into[place + 1] = high;
      into[place + 2] = marked;
      marked += popcount(low) + popcount(high);
    }
  });
  return marked;
}

/** Number of a fine cell among all marked cells, or -1 when no venue reaches it. */
export function fineRank(fineWords: Uint32Array, block: number, row: number, column: number): number {
  const bit = bitOf(row, column);
  const word = bit >>> 5;
  const place = (block * (WORDS_PER_BLOCK / 2) + (word >>> 1)) * PAIR_STRIDE;
  const bits = fineWords[place + (word & 1)] ?? outOfRange(fineWords, place + (word & 1), "fineWords");
  const below = bits & ((1 << (bit & 31)) - 1);
  if ((bits & (1 << (bit & 31))) === 0) return -1;
  return (
    (fineWords[place + 2] ?? outOfRange(fineWords, place + 2, "fineWords")) +
    popcount(below) +
    ((word & 1) === 1 ? popcount(fineWords[place] ?? outOfRange(fineWords, place, "fineWords")) : 0)
  );
}

/**
 * H3 cells centred beyond this latitude are left out of the grid's lists (their boxes span thousands of
 * columns), so queries in the rows they can reach ask h3-js. Those rows start a full degree closer to the
 * equator than the cells: a res-7 cell reaches about 2 km from its centre, a degree is 111 km.
 */
export const POLAR_CELL_LATITUDE = 80;
const POLAR_ROWS = (90 - POLAR_CELL_LATITUDE + 1) * CELLS_PER_DEGREE;

export function isPolarRow(row: number): boolean {
  return row < POLAR_ROWS || row >= GRID_ROWS - POLAR_ROWS;
}
