import { Counter, Gauge, type Registry } from "prom-client";

export type CacheReading = { hits: number; misses: number; entries: number };

/** The in-memory caches' lookups by result and their sizes, read at each scrape. */
export function cacheMetrics(
  registers: Registry[],
  caches: () => ReadonlyMap<string, () => CacheReading>,
): void {
  new Counter({
    name: "rollcall_cache_lookups_total",
    help: "Lookups of each in-memory cache since start, by result (hit or miss).",
    labelNames: ["cache", "result"],
    registers,
    collect() {
      this.reset();
      for (const [cache, read] of caches()) {
        const { hits, misses } = read();
        this.inc({ cache, result: "hit" }, hits);
        this.inc({ cache, result: "miss" }, misses);
      }
    },
  });
  new Gauge({
    name: "rollcall_cache_entries",
    help: "Entries held by each in-memory cache.",
    labelNames: ["cache"],
    registers,
    collect() {
      for (const [cache, read] of caches()) this.set({ cache }, read().entries);
    },
  });
}
