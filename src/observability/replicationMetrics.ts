import { Counter, Gauge, type Registry } from "prom-client";

/** Which hosts serve writes and reads, and how reads meant for a standby went (store.ts `Topology`). */
export type TopologyReading = {
  writes: string | null;
  reads: string | null;
  lagSeconds: number | null;
  standbyReads: Record<string, number> | null;
};

export type ReadTopology = () => TopologyReading | null;

/**
 * docs/operations.md §9: the hosts serving, the standby's lag, and where reads meant for a standby
 * went, read from `topology` at each scrape.
 */
export function replicationGauges(registers: Registry[], topology: ReadTopology): void {
  new Gauge({
    name: "rollcall_db_serving",
    help: "1 for the host (address:port, as it names itself) serving writes, and the one serving history and stats reads.",
    labelNames: ["role", "host"],
    registers,
    aggregator: "max",
    collect() {
      this.reset();
      const seen = topology();
      if (seen?.writes) this.set({ role: "writes", host: seen.writes }, 1);
      if (seen) this.set({ role: "reads", host: seen.reads ?? seen.writes ?? "primary" }, 1);
    },
  });
  new Gauge({
    name: "rollcall_db_replication_lag_seconds",
    help: "How far the standby of DATABASE_READ_URL is behind in replaying the primary's writes (absent while it is away).",
    registers,
    aggregator: "max",
    collect() {
      this.reset();
      const lag = topology()?.lagSeconds;
      if (lag !== null && lag !== undefined) this.set(lag);
    },
  });
  new Counter({
    name: "rollcall_db_standby_reads_total",
    help: "Reads meant for a standby, by outcome: standby (served there), behind (the user's last write not replayed, or lag past the bound), failed (the standby erred), skipped (found away or behind before); all but standby went to the primary.",
    labelNames: ["outcome"],
    registers,
    collect() {
      // The store counts; the scrape copies its totals.
      this.reset();
      for (const [outcome, count] of Object.entries(topology()?.standbyReads ?? {})) {
        this.inc({ outcome }, count);
      }
    },
  });
}
