import { batchItems } from "./faultFixture.ts";
import { createUsers, describeOutcome } from "./faultTraffic.ts";
import { type Call, call, type ServiceProcess } from "./serviceProcess.ts";

/**
 * Every route that reaches the database, for a user that has kept media at event 100: the health
 * check (the key's lookup), user creation, a batch, the sync mark, history, stats, hide and unhide.
 */
function probeCalls(userId: string, email: string, round: number): Omit<Call, "key">[] {
  return [
    { method: "GET", path: "/v1/health" },
    { method: "POST", path: "/v1/users", body: { email } },
    { method: "POST", path: `/v1/users/${userId}/media`, body: { media: batchItems(`probe-r${round}`, 3) } },
    { method: "POST", path: `/v1/users/${userId}/sync-complete`, body: {} },
    { method: "GET", path: `/v1/users/${userId}/events` },
    { method: "GET", path: `/v1/users/${userId}/stats` },
    { method: "POST", path: `/v1/users/${userId}/events/100/hide`, body: {} },
    { method: "POST", path: `/v1/users/${userId}/events/100/unhide`, body: {} },
  ];
}

export type Recovery = {
  /** Milliseconds from `since` to the end of the first round in which every route answered 2xx. */
  ms: number | null;
  /** The last failure seen, when there was one. */
  lastFailure: string | null;
  /** The slowest request of the round that succeeded. */
  slowest: string | null;
};

type ProbeUser = { userId: string; email: string };

/**
 * One request to every route in turn, each given until `deadline` (a performance.now() instant):
 * null when all answered 2xx, else the first failure; `slowest` names the slowest request.
 */
export async function probeRound(
  service: ServiceProcess,
  key: string,
  probe: ProbeUser,
  round: number,
  deadline = performance.now() + 10_000,
): Promise<{ failure: string | null; slowest: string }> {
  let slowest = "";
  let slowestMs = -1;
  for (const request of probeCalls(probe.userId, probe.email, round)) {
    const remaining = deadline - performance.now();
    if (remaining <= 0) return { failure: "out of time", slowest };
    const outcome = await call(service.baseUrl, { ...request, key }, remaining);
    const described = `${request.method} ${request.path}: ${describeOutcome(outcome)}`;
    if (outcome.kind !== "answer" || outcome.status < 200 || outcome.status > 201) {
      return { failure: described, slowest };
    }
    if (outcome.ms > slowestMs) [slowest, slowestMs] = [described, outcome.ms];
  }
  return { failure: null, slowest };
}

/**
 * Probes every route, round after round, until one round answers 2xx throughout or `windowMs` has
 * passed since `since` (a performance.now() instant, when the database was back).
 */
export async function timeToRecover(
  service: ServiceProcess,
  key: string,
  probe: ProbeUser,
  since: number,
  windowMs = 10_000,
): Promise<Recovery> {
  const deadline = since + windowMs;
  let lastFailure: string | null = null;
  for (let round = 0; performance.now() < deadline; round++) {
    const { failure, slowest } = await probeRound(service, key, probe, round, deadline);
    if (failure === null) return { ms: Math.round(performance.now() - since), lastFailure, slowest };
    lastFailure = failure;
    await Bun.sleep(25);
  }
  return { ms: null, lastFailure, slowest: null };
}

/** Prepares the probe's user: created, with media kept at event 100 (so hide and unhide have a row). */
export async function probeUser(service: ServiceProcess, key: string, prefix: string) {
  const [userId] = await createUsers(service, key, prefix, 1);
  if (userId === undefined) throw new Error("no probe user");
  const outcome = await call(service.baseUrl, {
    method: "POST",
    path: `/v1/users/${userId}/media`,
    key,
    body: { media: batchItems(`${prefix}-setup`, 3) },
  });
  if (outcome.kind !== "answer" || outcome.status !== 200) {
    throw new Error(`the probe user's first batch failed: ${describeOutcome(outcome)}`);
  }
  return { userId, email: `${prefix}0@example.com` };
}
