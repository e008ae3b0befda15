import { readFileSync } from "node:fs";

/**
 * Where the machine's CPU went during a run, in cores (CPU seconds per second of wall time): the load
 * generator (this process), the server process (main thread and its matching workers), the PostgreSQL
 * backends serving the target database, and the rest (other databases, PostgreSQL's background writers,
 * anything else on the machine). On a 2-core box shared by all of them, this is what tells a slow server
 * apart from a starved one.
 */
export type CpuShare = {
  generator: number;
  server: number | null;
  /**
   * The server's main thread, in percent of the run's wall time: running on a core, and ready to run but
   * waiting for one. HTTP, JSON, validation and the database driver all run on that one thread, so when
   * the two add up to nearly 100 it is the bottleneck, however much of the machine is idle: work queues
   * behind it. The waiting share is the price of sharing two cores with PostgreSQL and the generator.
   */
  serverThread: ThreadShare | null;
  postgres: number;
  rest: number;
  idle: number;
};

type ThreadShare = { running: number; waiting: number };

/** Nanoseconds a thread has spent running on a core and waiting in a run queue for one. */
type ThreadSchedule = { runningNs: number; waitingNs: number };

export type CpuSample = {
  wallMs: number;
  generator: number;
  server: number | null;
  serverThread: ThreadSchedule | null;
  /** Ticks of each backend of the target database. */
  backends: Map<number, number>;
  busy: number;
  idle: number;
};

/** Linux reports process and machine times in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process in ticks, or null when it is gone or /proc is unavailable. */
function processTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces; fields are counted from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * The first two fields of Linux's `/proc/PID/task/TID/schedstat`: time on a core and time waiting in a
 * run queue, both in nanoseconds (the third, the number of time slices, is not needed). Null for text of
 * another shape.
 */
export function parseSchedstat(text: string): ThreadSchedule | null {
  const [running = Number.NaN, waiting = Number.NaN] = text.trim().split(/\s+/).map(Number);
  if (!Number.isFinite(running) || !Number.isFinite(waiting)) return null;
  return { runningNs: running, waitingNs: waiting };
}

/** The main thread of a process (its thread id is the process id), or null without schedstat. */
function mainThreadSchedule(pid: number): ThreadSchedule | null {
  try {
    return parseSchedstat(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8"));
  } catch {
    return null;
  }
}

/** Busy and idle ticks of the whole machine (idle includes I/O wait). */
function machineTicks(): { busy: number; idle: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait };
  } catch {
    return { busy: 0, idle: 0 };
  }
}

export function sampleCpu(serverPid: number | null, backendPids: readonly number[]): CpuSample {
  const machine = machineTicks();
  const backends = new Map<number, number>();
  for (const pid of backendPids) {
    const ticks = processTicks(pid);
    if (ticks !== null) backends.set(pid, ticks);
  }
  return {
    wallMs: performance.now(),
    generator: processTicks(process.pid) ?? 0,
    server: serverPid === null ? null : processTicks(serverPid),
    serverThread: serverPid === null ? null : mainThreadSchedule(serverPid),
    backends,
    busy: machine.busy,
    idle: machine.idle,
  };
}

export function cpuBetween(start: CpuSample, end: CpuSample): CpuShare {
  const seconds = Math.max(0.001, (end.wallMs - start.wallMs) / 1000);
  const cores = (ticks: number) => Math.round((100 * ticks) / TICKS_PER_SECOND / seconds) / 100;
  const generator = end.generator - start.generator;
  const server = start.server === null || end.server === null ? null : end.server - start.server;
  // A backend that connected during the run spent all of its ticks in it.
  let postgres = 0;
  for (const [pid, ticks] of end.backends) postgres += ticks - (start.backends.get(pid) ?? 0);
  const percent = (ns: number) => Math.round(ns / 1e7 / seconds);
  const serverThread =
    start.serverThread === null || end.serverThread === null
      ? null
      : {
          running: percent(end.serverThread.runningNs - start.serverThread.runningNs),
          waiting: percent(end.serverThread.waitingNs - start.serverThread.waitingNs),
        };
  return {
    generator: cores(generator),
    server: server === null ? null : cores(server),
    serverThread,
    postgres: cores(postgres),
    rest: cores(Math.max(0, end.busy - start.busy - generator - (server ?? 0) - postgres)),
    idle: cores(end.idle - start.idle),
  };
}
