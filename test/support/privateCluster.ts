import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { childrenOf, freePort, isRunning, run, waitFor } from "./processes.ts";

/**
 * A PostgreSQL cluster of a test's own: initdb into a temporary directory, served on a free port, so a
 * fault test can stop, restart and kill it, and end every connection to its database, without touching
 * the machine's shared cluster (other test files run on it at the same time).
 */

export type StopMode = "fast" | "immediate";

export type PrivateCluster = {
  readonly port: number;
  /** URL of `database` on this cluster (user postgres, trust authentication). */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  /** Runs `query` on the maintenance database, on a connection opened for it alone. */
  admin<T>(query: string, params?: (string | number)[]): Promise<T[]>;
  /** Whether the postmaster runs (it may still be starting or stopping). */
  isUp(): boolean;
  start(): Promise<void>;
  stop(mode: StopMode): Promise<void>;
  restart(mode: StopMode): Promise<void>;
  /** Ends recovery on a standby (`pg_ctl promote`): it then accepts writes. */
  promote(): Promise<void>;
  /** kill -9 of the postmaster; returns once it and every process it had started are gone. */
  killPostmaster(): Promise<void>;
  /** Sends `signal` to the postmaster and every process it started (SIGSTOP freezes the server). */
  signalAll(signal: NodeJS.Signals): void;
  /** Ends every backend serving `database` (not the one asking); returns how many it signalled. */
  terminateBackends(database: string): Promise<number>;
  /** The end of the server's log, for a failure message. */
  logTail(lines?: number): string;
  destroy(): Promise<void>;
};

/** Where Debian and Ubuntu (the CI image included) install the server binaries, newest version first. */
function serverBinaries(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((entry) => /^\d+$/.test(entry) && existsSync(join(root, entry, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const [newest] = versions;
  if (newest !== undefined) return join(root, newest, "bin");
  const onPath = Bun.which("initdb");
  if (onPath !== null && Bun.which("pg_ctl") !== null) return join(onPath, "..");
  throw new Error(
    "the fault tests need the PostgreSQL server binaries (initdb, pg_ctl) to run a cluster of their own: " +
      "none under /usr/lib/postgresql/*/bin or on PATH (install the postgresql package)",
  );
}

/** initdb and the server refuse to run as root: as root, they run as the postgres OS user. */
const runsAsRoot = () => process.getuid?.() === 0;

function asClusterOwner(command: string[]): string[] {
  return runsAsRoot() ? ["runuser", "-u", "postgres", "--", ...command] : command;
}

function ownerIds(): { uid: number; gid: number } {
  const id = (flag: string) => {
    const result = Bun.spawnSync(["id", flag, "postgres"]);
    const value = Number(result.stdout.toString().trim());
    if (result.exitCode !== 0 || !Number.isInteger(value)) {
      throw new Error("running as root, the fault tests need a postgres OS user to run PostgreSQL as");
    }
    return value;
  };
  return { uid: id("-u"), gid: id("-g") };
}

/** Postmasters of clusters still open, killed when the test process exits however it exits. */
const openPostmasters = new Set<() => void>();
process.on("exit", () => {
  for (const kill of openPostmasters) kill();
});

/**
 * A new cluster, or with `standbyOf` a hot standby of that running cluster: a copy taken with
 * `pg_basebackup -R`, which streams from it from then on.
 */
export async function createPrivateCluster(standbyOf?: PrivateCluster): Promise<PrivateCluster> {
  const bin = serverBinaries();
  const dir = mkdtempSync(join(tmpdir(), "rollcall-pg-"));
  const data = join(dir, "data");
  const logFile = join(dir, "server.log");
  if (runsAsRoot()) {
    const { uid, gid } = ownerIds();
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  const ctl = (args: string[]) =>
    run(asClusterOwner([join(bin, "pg_ctl"), "-D", data, "-l", logFile, "-w", "-t", "30", "-s", ...args]));
  const postmasterPid = (): number | null => {
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  const killNow = () => {
    const pid = postmasterPid();
    if (pid === null) return;
    for (const target of [pid, ...childrenOf(pid)]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  };

  const initdb = await run(
    asClusterOwner(
      standbyOf === undefined
        ? [
            join(bin, "initdb"),
            "-D",
            data,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
          ]
        : [
            join(bin, "pg_basebackup"),
            ...["-h", "127.0.0.1", "-p", String(standbyOf.port), "-U", "postgres", "-D", data],
            ...["-R", "-X", "stream", "-c", "fast", "--no-sync"],
          ],
    ),
  );
  if (initdb.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb or pg_basebackup failed (${initdb.code}): ${initdb.stderr.trim()}`);
  }
  // fsync off: a killed server still loses nothing it acknowledged (its writes are in the kernel's
  // cache); only a machine crash would, and the tests never cause one.
  appendFileSync(
    join(data, "postgresql.conf"),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "fsync = off",
      "max_connections = 200",
      "",
    ].join("\n"),
  );

  const failed = async (action: string, result: { code: number; stderr: string }) =>
    new Error(`pg_ctl ${action} failed (${result.code}): ${result.stderr.trim()}\n${cluster.logTail()}`);

  const cluster: PrivateCluster = {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      await cluster.admin(`create database ${name}`);
      return cluster.url(name);
    },
    async admin<T>(query: string, params: (string | number)[] = []) {
      const client = postgres(cluster.url(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
      try {
        return [...(await client.unsafe(query, params))] as T[];
      } finally {
        await client.end({ timeout: 1 });
      }
    },
    isUp() {
      const pid = postmasterPid();
      return pid !== null && isRunning(pid);
    },
    async start() {
      const result = await ctl(["start"]);
      if (result.code !== 0) throw await failed("start", result);
      openPostmasters.add(killNow);
    },
    async stop(mode) {
      const result = await ctl(["-m", mode, "stop"]);
      if (result.code !== 0) throw await failed(`stop -m ${mode}`, result);
    },
    async promote() {
      const result = await ctl(["promote"]);
      if (result.code !== 0) throw await failed("promote", result);
    },
    async restart(mode) {
      const result = await ctl(["-m", mode, "restart"]);
      if (result.code !== 0) throw await failed(`restart -m ${mode}`, result);
    },
    async killPostmaster() {
      const pid = postmasterPid();
      if (pid === null || !isRunning(pid)) throw new Error("the private cluster is not running");
      const children = childrenOf(pid);
      process.kill(pid, "SIGKILL");
      // The backends notice the postmaster's death and exit on their own; a new postmaster refuses to
      // start while any of them still holds the shared memory.
      try {
        await waitFor(
          "the killed postmaster's processes to exit",
          () => [pid, ...children].every((p) => !isRunning(p)),
          10_000,
        );
      } catch {
        for (const child of children) if (isRunning(child)) process.kill(child, "SIGKILL");
      }
      // The lock files name a pid that is dead (or a zombie nobody reaps, which a new postmaster would
      // take for a live one): they are stale, and left behind only because of the kill.
      for (const stale of [
        join(data, "postmaster.pid"),
        join(dir, `.s.PGSQL.${port}.lock`),
        join(dir, `.s.PGSQL.${port}`),
      ])
        rmSync(stale, { force: true });
    },
    signalAll(signal) {
      const pid = postmasterPid();
      if (pid === null) throw new Error("the private cluster is not running");
      for (const target of [pid, ...childrenOf(pid)]) process.kill(target, signal);
    },
    async terminateBackends(database) {
      const [row] = await cluster.admin<{ terminated: number }>(
        `select count(*) filter (where pg_terminate_backend(pid))::int as terminated
         from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
        [database],
      );
      return row?.terminated ?? 0;
    },
    logTail(lines = 20) {
      try {
        return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "(no server log)";
      }
    },
    async destroy() {
      const pid = postmasterPid();
      if (pid !== null && isRunning(pid)) {
        const result = await ctl(["-m", "immediate", "stop"]);
        if (result.code !== 0) killNow();
      }
      openPostmasters.delete(killNow);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
