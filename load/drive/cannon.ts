import autocannon from "autocannon";
import { SingleBar } from "cli-progress";
import { isInteractive } from "../../src/config.ts";
import { type CpuSample, type CpuShare, cpuBetween } from "../report/cpu.ts";
import { type RequestKind, ResponseRecorder } from "./recorder.ts";

/** One request, built before the run; during the run it is only picked. */
export type PlannedRequest = {
  kind: RequestKind;
  method: "GET" | "POST" | "DELETE";
  /** Path from the server root, `/v1/...`. */
  path: string;
  body: Buffer | null;
  /** Media items in the body (0 for anything but a media batch). */
  items: number;
};

/** Hands out the requests of a scenario; `onResponse` lets a workload follow a cursor it received. */
export type Workload = {
  next(): PlannedRequest;
  onResponse?(request: PlannedRequest, status: number, body: string): void;
};

export type DriveOptions = {
  /** Server root (`http://127.0.0.1:PORT`). */
  baseUrl: string;
  key: string;
  connections: number;
  durationSeconds: number;
  label: string;
  /** Takes a CPU sample of the machine, the server and its database, before and after the run. */
  sampleCpu: () => Promise<CpuSample>;
};

export type DriveOutcome = { result: autocannon.Result; recorder: ResponseRecorder; cpu: CpuShare };

type RequestContext = { planned?: PlannedRequest; sentAt?: number };

/** `"matched": 12` at the top level of a batch response (entries of `matches` carry booleans instead). */
const MATCHED = /"matched":(\d+)/;

/**
 * Runs autocannon for a fixed time against the workload. setupRequest only picks the next pre-built
 * request; the latency is taken between building a request (just before autocannon writes it) and its
 * completed response, per request kind.
 */
export async function drive(workload: Workload, options: DriveOptions): Promise<DriveOutcome> {
  const recorder = new ResponseRecorder();
  // Separate header objects: autocannon writes Content-Length into the one a request with a body uses.
  const getHeaders = { "x-partner-api-key": options.key };
  const postHeaders = { "x-partner-api-key": options.key, "content-type": "application/json" };
  const request: autocannon.Request = {
    setupRequest(next, context) {
      const planned = workload.next();
      const state = context as RequestContext;
      state.planned = planned;
      state.sentAt = performance.now();
      next.method = planned.method;
      next.path = planned.path;
      next.headers = planned.body ? postHeaders : getHeaders;
      next.body = planned.body ?? undefined;
      return next;
    },
    onResponse(status, body, context) {
      const { planned, sentAt } = context as RequestContext;
      if (!planned || sentAt === undefined) return;
      const matched = planned.kind === "media" && status === 200 ? Number(MATCHED.exec(body)?.[1] ?? 0) : 0;
      recorder.record(planned.kind, status, performance.now() - sentAt, planned.items, matched);
      workload.onResponse?.(planned, status, body);
    },
  };
  const cpuAtStart = await options.sampleCpu();
  const finished = Promise.withResolvers<autocannon.Result>();
  const instance = autocannon(
    {
      url: options.baseUrl,
      connections: options.connections,
      duration: options.durationSeconds,
      requests: [request],
      timeout: 10,
    },
    (error, result) => (error ? finished.reject(error) : finished.resolve(result)),
  );
  const bar = isInteractive()
    ? new SingleBar({ format: `${options.label} [{bar}] {value}/{total} s` })
    : null;
  if (bar) {
    bar.start(options.durationSeconds, 0);
    let seconds = 0;
    instance.on("tick", () => bar.update(Math.min(++seconds, options.durationSeconds)));
  }
  try {
    const result = await finished.promise;
    return { result, recorder, cpu: cpuBetween(cpuAtStart, await options.sampleCpu()) };
  } finally {
    bar?.stop();
  }
}
