import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";
import type postgres from "postgres";

/** The machine a measurement was taken on: numbers mean little without it. */
export type Machine = {
  cores: number;
  memoryGiB: number;
  cpu: string;
  bun: string;
  postgres: string;
  /** 1-minute load average when the report was written: the machine is shared, this says how busy it was. */
  loadAverage: number;
};

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    return line?.split(":")[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

export async function describeMachine(client: postgres.Sql | null): Promise<Machine> {
  let version = "unknown";
  if (client) {
    const [row] = await client<{ server_version: string }[]>`show server_version`;
    version = row?.server_version ?? version;
  }
  return {
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    cpu: cpuModel(),
    bun: Bun.version,
    postgres: version,
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
