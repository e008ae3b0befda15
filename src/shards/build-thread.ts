import { parentPort, workerData } from "node:worker_threads";
import { type BuildJob, buildIndex } from "./build.ts";

const job = workerData as BuildJob;
parentPort?.postMessage(buildIndex(job.columns, job.options));
