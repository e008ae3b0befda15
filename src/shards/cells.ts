import { cellToBoundary, cellToLatLng, gridDisk, latLngToCell } from "h3-js";
import { EARTH_RADIUS_M, haversineMeters } from "./geo.ts";
import { outOfRange } from "./outOfRange.ts";

/**
 * H3 resolution of the index: cells of about 5 km² (1.2 km edge). Coarser cells make each cell's venue
 * list longer; finer ones make a 5 km venue register in hundreds of cells and leave more grid cells
 * straddling cell edges. Chosen by `bun run bench:match`.
 */
export const INDEX_RESOLUTION = 7;

/**
 * Slack on a cell's circumradius. A point H3 assigns to a cell lies inside the cell's polygon up to
 * floating-point error, and the polygon's farthest point from the centre is a vertex (edges are
 * great-circle arcs, along which distance from a point grows monotonically away from the foot point).
 */
const REACH_FACTOR = 1.02;
const REACH_EXTRA_M = 10;
/** The same slack the other way, for the disc around the centre that lies wholly inside the cell. */
const INNER_FACTOR = 0.98;
const INNER_MARGIN_M = 10;
const RAD = Math.PI / 180;

/** A 64-bit H3 index as two unsigned 32-bit halves (never a JS number: it has more than 53 bits). */
export type CellKey = { low: number; high: number };

/**
 * Splits h3-js's hexadecimal string. Native parseInt on two slices measured faster than a charCodeAt
 * loop over the (rope) string h3-js builds.
 */
export function cellKey(cell: string): CellKey {
  return {
    low: Number.parseInt(cell.slice(-8), 16) >>> 0,
    high: Number.parseInt(cell.slice(0, -8), 16) >>> 0,
  };
}

export function queryCell(latitude: number, longitude: number): string {
  return latLngToCell(latitude, longitude, INDEX_RESOLUTION);
}

/** Slot hash of a cell in an open-addressing table; the mask keeps it inside a power-of-two table. */
export function cellHash(low: number, high: number): number {
  let h = Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Global slot of a cell in a shard's table, or -1 when the shard has no such cell (linear probing). */
export function findSlot(
  slotCell: Uint32Array,
  shardSlots: Uint32Array,
  shard: number,
  low: number,
  high: number,
): number {
  const first = shardSlots[shard * 2] ?? outOfRange(shardSlots, shard * 2, "shardSlots");
  const mask = shardSlots[shard * 2 + 1] ?? outOfRange(shardSlots, shard * 2 + 1, "shardSlots");
  for (let slot = cellHash(low, high) & mask; ; slot = (slot + 1) & mask) {
    const slotHigh =
      slotCell[(first + slot) * 2 + 1] ?? outOfRange(slotCell, (first + slot) * 2 + 1, "slotCell");
    if (slotHigh === 0) return -1;
    if (
      slotHigh === high &&
      (slotCell[(first + slot) * 2] ?? outOfRange(slotCell, (first + slot) * 2, "slotCell")) === low
    )
      return first + slot;
  }
}

/**
 * What the builder needs of a cell: its centre, a radius no point of the cell lies beyond (reach), and
 * one within which every point belongs to the cell (inner).
 */
export type CellGeometry = {
  latitude: number;
  longitude: number;
  reachM: number;
  innerM: number;
  /** Filled on first use: only cells a venue keeps are expanded, and most cells visited are not. */
  neighbours: string[] | null;
};

function unitVector(latitude: number, longitude: number): [number, number, number] {
  const cosLat = Math.cos(latitude * RAD);
  return [cosLat * Math.cos(longitude * RAD), cosLat * Math.sin(longitude * RAD), Math.sin(latitude * RAD)];
}

/**
 * Distance from the centre to the nearest edge's great circle, a lower bound of its distance to the
 * boundary (edges are arcs of those circles), so the disc of that radius lies inside the cell.
 */
function innerRadius(latitude: number, longitude: number, boundary: number[][]): number {
  const [px, py, pz] = unitVector(latitude, longitude);
  let least = Math.PI;
  boundary.forEach(([aLat = 0, aLng = 0], i) => {
    const [bLat = 0, bLng = 0] = boundary[(i + 1) % boundary.length] ?? [];
    const [ax, ay, az] = unitVector(aLat, aLng);
    const [bx, by, bz] = unitVector(bLat, bLng);
    const nx = ay * bz - az * by;
    const ny = az * bx - ax * bz;
    const nz = ax * by - ay * bx;
    const length = Math.hypot(nx, ny, nz);
    if (length > 0)
      least = Math.min(least, Math.asin(Math.min(1, Math.abs(px * nx + py * ny + pz * nz) / length)));
  });
  return Math.max(0, least * EARTH_RADIUS_M * INNER_FACTOR - INNER_MARGIN_M);
}

/** Memoises geometry: neighbouring venues share most of their cells, and h3-js calls dominate a build. */
export class CellAtlas {
  private readonly cache = new Map<string, CellGeometry>();

  geometry(cell: string): CellGeometry {
    const known = this.cache.get(cell);
    if (known !== undefined) return known;
    const [latitude, longitude] = cellToLatLng(cell);
    const boundary = cellToBoundary(cell);
    let circumradius = 0;
    for (const [lat = 0, lng = 0] of boundary) {
      circumradius = Math.max(circumradius, haversineMeters(latitude, longitude, lat, lng));
    }
    const geometry: CellGeometry = {
      latitude,
      longitude,
      reachM: circumradius * REACH_FACTOR + REACH_EXTRA_M,
      innerM: innerRadius(latitude, longitude, boundary),
      neighbours: null,
    };
    this.cache.set(cell, geometry);
    return geometry;
  }

  /** Bounds memory on huge catalogs; callers visit venues in spatial order so the cache stays warm. */
  trim(limit: number): void {
    if (this.cache.size > limit) this.cache.clear();
  }

  /**
   * Every cell a venue's radius can reach, by flood fill from the venue's own cell. A cell is kept when
   * its centre is within radius + reach of the venue: every cell holding a point within the radius
   * passes, and such cells are connected through passing cells (the path from the venue to that point
   * stays within the radius), so the fill finds them all, near poles, pentagons and the antimeridian too.
   */
  reachableCells(latitude: number, longitude: number, radiusM: number): string[] {
    const start = latLngToCell(latitude, longitude, INDEX_RESOLUTION);
    const seen = new Set<string>([start]);
    const queue = [start];
    const kept: string[] = [];
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
      const geometry = this.geometry(next);
      const distance = haversineMeters(latitude, longitude, geometry.latitude, geometry.longitude);
      if (next !== start && distance > radiusM + geometry.reachM) continue;
      kept.push(next);
      geometry.neighbours ??= gridDisk(next, 1).filter((neighbour) => neighbour !== next);
      for (const neighbour of geometry.neighbours) {
        if (!seen.has(neighbour)) {
          seen.add(neighbour);
          queue.push(neighbour);
        }
      }
    }
    return kept;
  }
}
