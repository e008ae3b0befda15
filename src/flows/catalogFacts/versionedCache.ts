import { LRUCache } from "lru-cache";

export type CacheStats = { hits: number; misses: number; entries: number };

/**
 * Catalog facts in memory by integer key, for one catalog version at a time, least recently used
 * first out past `maxBytes` (0 turns it off: nothing is kept).
 *
 * Catalog rows change only when an import commits, which bumps catalog_state.version in the same
 * transaction, and every answer reads that version in the snapshot of its own rows. Facts are served
 * only for the version an answer was read at, so an answer never shows facts older than the catalog it
 * was read from: a newer version empties the cache, and an answer read at an older one (a request that
 * overlapped an import) reads its facts again and keeps nothing.
 */
export class VersionedCache<V extends {}> {
  readonly #entries: LRUCache<number, V> | null;
  #version = -1n;
  #hits = 0;
  #misses = 0;

  constructor(maxBytes: number, sizeOf: (value: V) => number) {
    this.#entries =
      maxBytes > 0 ? new LRUCache<number, V>({ maxSize: maxBytes, sizeCalculation: sizeOf }) : null;
  }

  /** Whether entries may be read and written for `version`; a newer version empties the cache first. */
  holds(version: string): boolean {
    if (this.#entries === null) return false;
    const asked = BigInt(version);
    if (asked > this.#version) {
      this.#entries.clear();
      this.#version = asked;
    }
    return asked === this.#version;
  }

  /** Whether `key` is held at the latest version seen (a hint: it may be evicted before it is read). */
  has(key: number): boolean {
    return this.#entries?.has(key) === true;
  }

  /** The entry of `key`; only for a version `holds` answered true for. */
  get(key: number): V | undefined {
    const value = this.#entries?.get(key);
    if (value === undefined) this.#misses++;
    else this.#hits++;
    return value;
  }

  /** Lookups since start by outcome, and what is held now: the hit ratio operators watch. */
  stats(): CacheStats {
    return { hits: this.#hits, misses: this.#misses, entries: this.#entries?.size ?? 0 };
  }

  /** Keeps `value`; only for a version `holds` answered true for. */
  set(key: number, value: V): void {
    this.#entries?.set(key, value);
  }
}
