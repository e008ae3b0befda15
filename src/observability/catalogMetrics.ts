import { Counter, Gauge, type Registry } from "prom-client";

/** What the catalog's health gauges read at each scrape (src/store/catalog/catalogHealth.ts). */
export type CatalogHealthReading = {
  version: number;
  importedAt: Date | null;
  pendingCorrections: number;
};

/**
 * The catalog's health as contract §15 asks operators to see it: the stored catalog's version and last
 * import, the corrections still to be placed, and the kept items placed again by outcome.
 */
export class CatalogMetrics {
  readonly #replaced: Counter<"outcome">;
  #health: () => Promise<CatalogHealthReading | null> = async () => null;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#replaced = new Counter({
      name: "rollcall_catalog_replaced_items_total",
      help: "Kept items placed again after a catalog correction, by outcome: stayed, moved, removed.",
      labelNames: ["outcome"],
      registers,
    });
    // One read serves the three gauges of a scrape.
    let read: { at: number; reading: Promise<CatalogHealthReading | null> } | null = null;
    const health = () => {
      if (read === null || performance.now() - read.at > 1000) {
        read = { at: performance.now(), reading: this.#health().catch(() => null) };
      }
      return read.reading;
    };
    const gauge = (name: string, help: string, pick: (reading: CatalogHealthReading) => number | null) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const reading = await health();
          const value = reading === null ? null : pick(reading);
          if (value !== null) this.set(value);
        },
      });
    gauge("rollcall_catalog_version", "The stored catalog's version (catalog_state).", (r) => r.version);
    gauge(
      "rollcall_catalog_last_import_timestamp_seconds",
      "When the last catalog import committed, changed or not.",
      (r) => (r.importedAt === null ? null : r.importedAt.getTime() / 1000),
    );
    gauge(
      "rollcall_catalog_corrections_pending",
      "Corrected events whose kept items are still to be placed again.",
      (r) => r.pendingCorrections,
    );
  }

  watchHealth(read: () => Promise<CatalogHealthReading>): void {
    this.#health = read;
  }

  replaced({ items, moved, removed }: { items: number; moved: number; removed: number }): void {
    this.#replaced.inc({ outcome: "stayed" }, items - moved - removed);
    this.#replaced.inc({ outcome: "moved" }, moved);
    this.#replaced.inc({ outcome: "removed" }, removed);
  }
}
