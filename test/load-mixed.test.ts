/** The mixed partner flow of the load tool (load/drive/mixed.ts): deletions and account erasures in it. */
import { expect, test } from "bun:test";
import type { PlannedRequest } from "../load/drive/cannon.ts";
import { DELETION, ERASURE_PER_SESSION } from "../load/drive/lifecycle.ts";
import { mixedWorkload, SESSION_MIX } from "../load/drive/mixed.ts";

const users = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    email: `${prefix}${i}@x.example`,
  }));
const batches = Array.from({ length: 20 }, (_, i) => ({
  user: i,
  items: 100,
  body: Buffer.from(`{"media":[${i}]}`),
}));

test("incremental scans send deletions of seeded ids at their share, and accounts get closed", () => {
  const sessions = 20_000;
  const workload = mixedWorkload({
    seed: 7,
    returning: users("aa", 50),
    fresh: users("bb", 50),
    batches,
    sessions,
  });
  const seen: PlannedRequest[] = [];
  let closed = 0;
  for (let i = 0; i < 200_000 && closed < 3; i++) {
    const request = workload.next();
    seen.push(request);
    if (request.kind === "users" && request.body?.toString().includes("closing-")) {
      workload.onResponse?.(
        request,
        201,
        '{"user_id":"cccccccc-0000-4000-8000-000000000001","existing":false}',
      );
      const batch = workload.next();
      expect([batch.kind, batch.path]).toEqual([
        "media",
        "/v1/users/cccccccc-0000-4000-8000-000000000001/media",
      ]);
      workload.onResponse?.(batch, 200, "{}");
      const erasure = workload.next();
      expect([erasure.kind, erasure.method, erasure.path]).toEqual([
        "erase",
        "DELETE",
        "/v1/users/cccccccc-0000-4000-8000-000000000001",
      ]);
      closed++;
    }
  }
  expect(closed).toBe(3);
  const deletions = seen.filter((r) => r.kind === "delete");
  const syncs = seen.filter((r) => r.kind === "sync").length;
  const incremental = syncs * (SESSION_MIX.incremental / (SESSION_MIX.incremental + SESSION_MIX.fullScan));
  expect(deletions.length / incremental).toBeGreaterThan(DELETION.perIncrementalScan * 0.8);
  expect(deletions.length / incremental).toBeLessThan(DELETION.perIncrementalScan * 1.2);
  for (const deletion of deletions) {
    const { ids } = JSON.parse(deletion.body?.toString() ?? "{}");
    expect(deletion.path).toMatch(/^\/v1\/users\/aa[0-9a-f-]+\/media\/delete$/);
    expect(ids.length).toBeGreaterThanOrEqual(1);
    expect(ids.length).toBeLessThanOrEqual(DELETION.maxIds);
    for (const id of ids) expect(id).toMatch(/^aa000000-[0-9a-f]{8}\/L0\/001$/);
  }
  expect(ERASURE_PER_SESSION).toBeLessThan(0.01);
});
