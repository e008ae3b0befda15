import { collectDefaultMetrics, Gauge, type Registry } from "prom-client";
import { buildInfo } from "./build.ts";

/**
 * prom-client's defaults that are gauges named like counters: totals of `rollcall_nodejs_active_*`
 * (the same figures by type), which `promtool check metrics` refuses. `sum()` over the by-type gauge
 * gives each of them.
 */
const MISNAMED_DEFAULTS = ["active_handles_total", "active_requests_total", "active_resources_total"];

/**
 * The figures of the process as a whole, in the supervising thread's registry only (request threads'
 * registries are summed into it, and would count these once per thread): prom-client's CPU, memory and
 * event-loop metrics, and `rollcall_build_info`, a constant 1 labelled with the running build.
 */
export function registerProcessMetrics(registry: Registry): void {
  const { version, commit } = buildInfo();
  collectDefaultMetrics({ register: registry, prefix: "rollcall_" });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(`rollcall_nodejs_${name}`);
  new Gauge({
    name: "rollcall_build_info",
    help: "Always 1; the labels name the running build: package version and git commit (empty when unknown).",
    labelNames: ["version", "commit"],
    registers: [registry],
  }).set({ version, commit: commit ?? "" }, 1);
}
