/**
 * The files of deploy/ as an operator installs them: the alert rules pass `promtool check rules` and
 * their unit tests, the environment example names every setting and only settings, with values the
 * service accepts, and the systemd unit passes `systemd-analyze verify` and gives a shutdown the time
 * it may take.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_VARIABLES, parseConfig } from "../src/config.ts";
import { SHUTDOWN_GRACE_MS } from "../src/main.ts";

const root = join(import.meta.dir, "..");
const deploy = (name: string) => readFileSync(join(root, "deploy", name), "utf8");
const promtool = Bun.which("promtool");
const systemdAnalyze = Bun.which("systemd-analyze");
if (promtool === null) {
  console.warn("promtool is not installed (Debian package prometheus): the promtool checks are skipped");
}

function runPromtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(promtool ?? "promtool", args, { cwd: root, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `NAME=value` lines of the example, set or shown commented out with their default. */
function exampleLines(): { name: string; value: string; set: boolean }[] {
  return [...deploy("rollcall.env.example").matchAll(/^(# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => ({
    name: match[2] ?? "",
    value: match[3] ?? "",
    set: match[1] === undefined,
  }));
}

describe("Prometheus alert rules", () => {
  test.skipIf(promtool === null)("promtool check rules accepts them", () => {
    const check = runPromtool(["check", "rules", "deploy/prometheus-rules.yml"]);
    expect(check.output).toContain("SUCCESS");
    expect(check.status).toBe(0);
  });

  test.skipIf(promtool === null)(
    "each alert tested fires on its series and not before (promtool test rules)",
    () => {
      const run = runPromtool(["test", "rules", "test/deploy/prometheus-rules.test.yml"]);
      expect(run.output).toContain("SUCCESS");
      expect(run.status).toBe(0);
    },
  );
});

describe("the environment file example", () => {
  test("shows every setting the service reads, once, and nothing else", () => {
    const names = exampleLines().map((line) => line.name);
    expect(names.filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
    expect(CONFIG_VARIABLES.filter((name) => !names.includes(name))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  test("its values are accepted, for a production server on PostgreSQL", () => {
    const env = Object.fromEntries(
      exampleLines().flatMap((line) => (line.set ? [[line.name, line.value]] : [])),
    );
    const config = parseConfig(env);
    expect(config).toMatchObject({ environment: "production", demo: false });
    expect(config.databaseUrl).not.toBeNull();
  });
});

describe("the systemd unit", () => {
  const unit = deploy("rollcall.service");
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(unit)?.[1];

  test("starts src/main.ts with the runtime npm installed, configured by the environment file", () => {
    expect(setting("ExecStart")).toBe("/opt/rollcall/node_modules/.bin/bun src/main.ts");
    expect(setting("WorkingDirectory")).toBe("/opt/rollcall");
    expect(setting("EnvironmentFile")).toBe("/etc/rollcall/rollcall.env");
    expect(setting("KillSignal")).toBe("SIGTERM");
  });

  test.skipIf(systemdAnalyze === null)("systemd-analyze verify finds nothing to say about it", () => {
    // Verified as installed, but with this checkout and runtime in place of /opt/rollcall's.
    const dir = mkdtempSync(join(tmpdir(), "rollcall-unit-"));
    try {
      writeFileSync(
        join(dir, "rollcall.service"),
        unit
          .replaceAll("/opt/rollcall/node_modules/.bin/bun", process.execPath)
          .replaceAll("/opt/rollcall", root),
      );
      const verify = spawnSync(
        systemdAnalyze ?? "systemd-analyze",
        ["verify", join(dir, "rollcall.service")],
        {
          encoding: "utf8",
        },
      );
      expect(`${verify.stdout}${verify.stderr}`).toBe("");
      expect(verify.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("waits for a shutdown longer than the example's drain and the shutdown's grace", () => {
    const drain = Number(exampleLines().find((line) => line.name === "DRAIN_SECONDS" && line.set)?.value);
    expect(drain).toBeGreaterThan(0);
    expect(Number(setting("TimeoutStopSec"))).toBeGreaterThan(drain + SHUTDOWN_GRACE_MS / 1000);
  });
});
