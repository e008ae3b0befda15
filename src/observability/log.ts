import pino from "pino";

/**
 * How every part of the service reports what happened: an event name and plain fields. Callers never
 * pick a level; `levelOf` does, so one table says what an operator is paged for.
 */
export type Log = (event: string, fields?: Record<string, unknown>) => void;

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

/** Events that mean something failed or is degraded; everything else is information. */
const levelOf: Record<string, "warn" | "error"> = {
  internal_error: "error",
  uncaught_error: "error",
  database_lookup_lost: "warn",
  shutdown_forced: "error",
  request_deadline: "warn",
  database_request_failed: "warn",
  export_failed: "warn",
  database_unavailable: "error",
  rate_limit_store_unavailable: "warn",
  catalog_refresh_failed: "warn",
  catalog_generation_close_failed: "warn",
  request_thread_replaced: "warn",
  request_thread_failed: "error",
};

/** The access log's event: one line per request, at info, so LOG_LEVEL=warn keeps only the faults. */
export const ACCESS_EVENT = "request";

const FLUSH_WAIT_MS = 1000;

export type Logger = {
  log: Log;
  /** Writes what is buffered; awaited before the process exits so the last lines are not lost. */
  flush(): Promise<void>;
};

/**
 * JSON lines on stderr (stdout carries the start-up lines a person or a script reads). The destination
 * writes asynchronously: lines logged while a write is under way go out together in the next one, so
 * the access log never blocks a request on the terminal or the pipe; `flush` drains it on shutdown.
 */
export function createLogger(level: LogLevel, fd = 2): Logger {
  const stream = pino.destination({ dest: fd, sync: false });
  const logger = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  return {
    log: (event, fields = {}) => {
      const level = levelOf[event] ?? "info";
      if (logger.isLevelEnabled(level)) logger[level]({ event, ...fields });
    },
    flush: () =>
      new Promise<void>((resolve) => {
        // Written here and now when the destination takes it; otherwise (a write still under way that
        // the synchronous path refuses) once it drains, but a destination that cannot finish (a closed
        // pipe) must not hold the exit up.
        const timer = setTimeout(resolve, FLUSH_WAIT_MS);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        try {
          stream.flushSync();
          done();
        } catch {
          stream.flush(done);
        }
      }),
  };
}

/**
 * `log` for a fault that fails many requests at once (the database away, every request past its
 * deadline): the first line goes out at once, then at most one every `intervalMs`, saying how many
 * were left out since the last.
 */
export function throttled(log: Log, intervalMs: number): Log {
  let lastMs = Number.NEGATIVE_INFINITY;
  let skipped = 0;
  return (event, fields = {}) => {
    const now = performance.now();
    if (now - lastMs < intervalMs) {
      skipped++;
      return;
    }
    lastMs = now;
    log(event, skipped > 0 ? { ...fields, alsoSinceLastLine: skipped } : fields);
    skipped = 0;
  };
}

/** A log that drops everything: for tests and tools that do not ask for one. */
export const silentLog: Log = () => {};
