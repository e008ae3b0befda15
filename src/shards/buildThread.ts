import { parentPort, workerData } from "node:worker_threads";
import type { BuildJob, BuildMessage } from "./build.ts";
import { buildCellSections } from "./buildCells.ts";
import { layoutEvents, planVenues } from "./buildEvents.ts";

/** One half of a background build (see buildInBackground). */
function post(message: BuildMessage): void {
  parentPort?.postMessage(message);
}

const job = workerData as BuildJob;
if (job.role === "events") {
  const plan = planVenues(job.columns, job.options.settings);
  post({
    kind: "venues",
    sections: { venueId: plan.venueId, venueRecord: plan.venueRecord, venueEvents: plan.venueEvents },
  });
  post({ kind: "events", sections: layoutEvents(job.columns, plan) });
} else {
  post({ kind: "cells", sections: buildCellSections(job.venueRecord, job.shards) });
}
