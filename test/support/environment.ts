import { variable } from "../../src/config.ts";

/**
 * The PostgreSQL server tests and benchmarks run against: TEST_DATABASE_URL, else DATABASE_URL, else the
 * local default. Each test file creates a database of its own on it and drops it afterwards.
 */
export function testDatabaseUrl(): string {
  return (
    variable("TEST_DATABASE_URL") ?? variable("DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres"
  );
}

/**
 * SHARDS, WORKERS and REQUEST_THREADS as a test run sets them, for the test servers: CI runs the API
 * tests under several engine and thread settings, and the answers must be the same under each.
 * REQUEST_THREADS is 1 unless the run sets it: a test server is in-process unless asked otherwise.
 */
export function testEngineEnv(): Record<string, string> {
  const env: Record<string, string> = { REQUEST_THREADS: "1" };
  for (const name of ["SHARDS", "WORKERS", "REQUEST_THREADS"]) {
    const value = variable(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}
