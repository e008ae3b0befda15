import postgres from "postgres";
import { setPartnerLimits } from "../../src/limits/overrides.ts";
import { importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import { openStore } from "../../src/store/db.ts";
import { createPartner, issueKey } from "../../src/store/keys.ts";
import { event, performer, succeeded, venue } from "./catalogImport.ts";
import type { PrivateCluster } from "./privateCluster.ts";
import { type Call, call, isEnvelope, type Outcome, type ServiceProcess } from "./serviceProcess.ts";

/**
 * What the fault tests share: a migrated database with a small catalog and a partner key, media
 * batches whose items all match and whose ids name their batch, client loops that record every
 * outcome, a probe of every route, and the checks of what the database holds afterwards.
 */

export const DATABASE = "rollcall_faults";

/** Venue 1 in New York hosts three licensed events two days apart; every batch item matches one. */
const VENUE = { latitude: 40.75, longitude: -73.99 };
const EVENTS = [
  { id: 100, startsAt: Date.parse("2025-07-05T00:00:00Z"), local: "2025-07-04T20:00:00" },
  { id: 101, startsAt: Date.parse("2025-07-07T00:00:00Z"), local: "2025-07-06T20:00:00" },
  { id: 102, startsAt: Date.parse("2025-07-09T00:00:00Z"), local: "2025-07-08T20:00:00" },
] as const;

const CATALOG = [
  venue(1, "America/New_York", { ...VENUE, city: "New York", region: "NY" }),
  performer(10),
  performer(11),
  ...EVENTS.map((e, i) =>
    event(e.id, 1, e.local, { performers: [{ id: i % 2 === 0 ? 10 : 11, is_headliner: true }] }),
  ),
];

export type FaultDatabase = { url: string; key: string };

/** Creates the test database on the private cluster, migrated, with the catalog and a sandbox key. */
export async function prepareDatabase(cluster: PrivateCluster): Promise<FaultDatabase> {
  const url = await cluster.createDatabase(DATABASE);
  const store = await openStore({ databaseUrl: url, dataDir: "", poolSize: 2 });
  try {
    succeeded(await importCatalog(store, memoryLines(CATALOG)));
    await createPartner(store, { id: "acme", name: "Acme" });
    const issued = await issueKey(store, { partnerId: "acme", environment: "sandbox", label: null });
    return { url, key: issued.key };
  } finally {
    await store.close();
  }
}

/** Adds a partner with its own read budget and returns its sandbox key. */
export async function addPartner(url: string, id: string, readLimit: number): Promise<string> {
  const store = await openStore({ databaseUrl: url, dataDir: "", poolSize: 1 });
  try {
    await createPartner(store, { id, name: id });
    await setPartnerLimits(store, id, { read: readLimit });
    return (await issueKey(store, { partnerId: id, environment: "sandbox", label: null })).key;
  } finally {
    await store.close();
  }
}

const BATCH_SIZE = 20;

export type MediaItem = {
  id: string;
  taken_at: string;
  latitude: number;
  longitude: number;
  media_type: "photo" | "video";
};

/**
 * The items of batch `batchKey` (letters, digits and dashes): item i is `${batchKey}.${i}`, so every
 * stored row names the batch it came in, and matches event 100, 101 or 102 (`expectedEventOf`).
 */
export function batchItems(batchKey: string, size = BATCH_SIZE): MediaItem[] {
  let seed = 0;
  for (const char of batchKey) seed = (seed * 31 + (char.codePointAt(0) ?? 0)) % 1_000_003;
  return Array.from({ length: size }, (_, i) => {
    const at = EVENTS[i % EVENTS.length] ?? EVENTS[0];
    // Within the first five hours of the event, spread so lists interleave batches.
    const offsetMs = ((seed * 7_919 + i * 104_729) % 18_000_000) + i;
    return {
      id: `${batchKey}.${i}`,
      taken_at: new Date(at.startsAt + offsetMs).toISOString(),
      ...VENUE,
      media_type: i % 4 === 3 ? "video" : "photo",
    };
  });
}

export function expectedEventOf(mediaId: string): number {
  const index = Number(mediaId.slice(mediaId.lastIndexOf(".") + 1));
  return EVENTS[index % EVENTS.length]?.id ?? 0;
}

const batchKeyOf = (mediaId: string) => mediaId.slice(0, mediaId.lastIndexOf("."));

/** The runtime closes a connection idle this long without an answer; the service answers before. */
const SLOWEST_ANSWER_MS = 10_000;

export type BatchRecord = { userId: string; batchKey: string; ids: string[]; outcome: Outcome };
export type ReadRecord = { path: string; outcome: Outcome };

/** Every outcome the client loops of one scenario saw. */
export class Traffic {
  readonly batches: BatchRecord[] = [];
  readonly reads: ReadRecord[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly baseUrl: () => string,
    private readonly key: string,
    /** No request waits longer than this: past the service's own 8 s deadline and the runtime's 10 s. */
    private readonly requestTimeoutMs = 15_000,
  ) {}

  get acknowledged(): BatchRecord[] {
    return this.batches.filter((b) => b.outcome.kind === "answer" && b.outcome.status === 200);
  }

  /** Clients each sending batches of new items for their own user, one after another. */
  ingest(users: readonly string[], tag: string): void {
    users.forEach((userId, client) => {
      this.loops.push(
        this.loop(async (n) => {
          const batchKey = `${tag}-c${client}-b${n}`;
          const media = batchItems(batchKey);
          const outcome = await this.send({
            method: "POST",
            path: `/v1/users/${userId}/media`,
            body: { media },
          });
          this.batches.push({ userId, batchKey, ids: media.map((m) => m.id), outcome });
          return outcome;
        }),
      );
    });
  }

  /** Clients each reading a user's history and stats in turn. */
  read(users: readonly string[]): void {
    users.forEach((userId, client) => {
      this.loops.push(
        this.loop(async (n) => {
          const path = (n + client) % 2 === 0 ? `/v1/users/${userId}/events` : `/v1/users/${userId}/stats`;
          const outcome = await this.send({ method: "GET", path });
          this.reads.push({ path, outcome });
          return outcome;
        }),
      );
    });
  }

  /** Resolves once the loops have seen `count` answers of 200 between them, or after `timeoutMs`. */
  async untilSucceeded(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    const ok = () =>
      [...this.batches, ...this.reads].filter((r) => r.outcome.kind === "answer" && r.outcome.status === 200)
        .length;
    const start = ok();
    while (ok() - start < count) {
      if (performance.now() > deadline) {
        throw new Error(`the clients saw ${ok() - start} successes in ${timeoutMs} ms, expected ${count}`);
      }
      await Bun.sleep(10);
    }
  }

  /** Stops the loops and waits for their last requests (each bounded by the request timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /**
   * Every outcome that was not a 200, nor a 500 or 503 in the error envelope, or that took longer than
   * the runtime's 10 s idle timeout (the service answers within 8 s: docs/architecture.md, "When the
   * database stops answering"), described.
   */
  unexpected(): string[] {
    return this.described((outcome) => {
      if (outcome.kind !== "answer" || outcome.ms > SLOWEST_ANSWER_MS) return true;
      if (outcome.status === 200) return false;
      return !((outcome.status === 500 || outcome.status === 503) && isEnvelope(outcome.body));
    });
  }

  /** Requests sent at or after `since` (a performance.now() instant) that were not answered 200. */
  failedSince(since: number): string[] {
    return this.described(
      (outcome) => outcome.at >= since && (outcome.kind !== "answer" || outcome.status !== 200),
    );
  }

  private described(selected: (outcome: Outcome) => boolean): string[] {
    const all = [
      ...this.batches.map((b) => ({ what: `POST media ${b.batchKey}`, outcome: b.outcome })),
      ...this.reads.map((r) => ({ what: `GET ${r.path}`, outcome: r.outcome })),
    ];
    return all
      .filter(({ outcome }) => selected(outcome))
      .map(({ what, outcome }) => `${what}: ${describeOutcome(outcome)}`);
  }

  private send(request: Omit<Call, "key">): Promise<Outcome> {
    return call(this.baseUrl(), { ...request, key: this.key }, this.requestTimeoutMs);
  }

  private async loop(step: (n: number) => Promise<Outcome>): Promise<void> {
    // Bounded however long a test runs; a client that fails backs off a little, as a partner would.
    for (let n = 0; n < 100_000 && !this.stopped; n++) {
      const outcome = await step(n);
      if (outcome.kind !== "answer" || outcome.status !== 200) await Bun.sleep(50);
    }
  }
}

export function describeOutcome(outcome: Outcome): string {
  const ms = Math.round(outcome.ms);
  if (outcome.kind === "dropped") return `no answer, connection ended (${outcome.error}) after ${ms} ms`;
  if (outcome.kind === "timeout") return `no answer within ${ms} ms`;
  const body = JSON.stringify(outcome.body) ?? "";
  return `${outcome.status} ${body.length > 200 ? `${body.slice(0, 200)}…` : body} after ${ms} ms`;
}

/** Creates `count` users through the API and returns their ids. */
export async function createUsers(service: ServiceProcess, key: string, prefix: string, count: number) {
  const users: string[] = [];
  for (let i = 0; i < count; i++) {
    const outcome = await call(service.baseUrl, {
      method: "POST",
      path: "/v1/users",
      key,
      body: { email: `${prefix}${i}@example.com` },
    });
    const body = outcome.kind === "answer" ? (outcome.body as { user_id?: unknown }) : null;
    if (outcome.kind !== "answer" || outcome.status > 201 || typeof body?.user_id !== "string") {
      throw new Error(`user creation failed: ${describeOutcome(outcome)}`);
    }
    users.push(body.user_id);
  }
  return users;
}

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

/**
 * What the database holds, checked against itself and against what the clients were told: each
 * history row's counts equal its media rows', each stored media list lists exactly its media rows in
 * order, every batch is stored whole or not at all, and every acknowledged batch is stored.
 * Returns the problems found (empty when all holds), a few of each kind.
 */
export async function storedProblems(url: string, batches: readonly BatchRecord[]): Promise<string[]> {
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const counts = await client<
      { user_id: string; event_id: number; kept: number[]; counted: number[] | null }[]
    >`
      with kept as (
        select user_id, event_id, count(*)::int as media,
               count(*) filter (where media_type = 'photo')::int as photos,
               count(*) filter (where media_type = 'video')::int as videos
        from media group by user_id, event_id
      )
      select coalesce(k.user_id, ue.user_id)::text as user_id, coalesce(k.event_id, ue.event_id) as event_id,
             array[coalesce(k.media, 0), coalesce(k.photos, 0), coalesce(k.videos, 0)] as kept,
             case when ue.user_id is null then null
                  else array[ue.media_count, ue.photo_count, ue.video_count] end as counted
      from kept k full join user_events ue on ue.user_id = k.user_id and ue.event_id = k.event_id
      where ue.user_id is null
         or (coalesce(k.media, 0), coalesce(k.photos, 0), coalesce(k.videos, 0))
            is distinct from (ue.media_count, ue.photo_count, ue.video_count)`;
    const lists = await client<{ user_id: string; event_id: number; rows: string[]; listed: string[] }[]>`
      with rows as (
        select user_id, event_id,
               array_agg(media_id || ':' || media_type order by taken_at, media_id collate "C") as ids
        from media group by user_id, event_id
      ),
      listed as (
        select user_id, event_id,
               array(select item ->> 'media_id' || ':' || (item ->> 'media_type')
                     from jsonb_array_elements(media_json::jsonb) with ordinality as l(item, n)
                     order by n) as ids
        from user_event_media
      )
      select coalesce(r.user_id, l.user_id)::text as user_id, coalesce(r.event_id, l.event_id) as event_id,
             coalesce(r.ids, '{}') as rows, coalesce(l.ids, '{}') as listed
      from rows r full join listed l on l.user_id = r.user_id and l.event_id = r.event_id
      where coalesce(r.ids, '{}') is distinct from coalesce(l.ids, '{}')`;
    const stored = await client<{ media_id: string }[]>`select media_id from media`;

    const storedIds = new Set(stored.map((row) => row.media_id));
    const perBatch = new Map<string, number>();
    for (const id of storedIds) perBatch.set(batchKeyOf(id), (perBatch.get(batchKeyOf(id)) ?? 0) + 1);
    const sizeOf = new Map(batches.map((b) => [b.batchKey, b.ids.length]));
    const partial = [...perBatch].filter(([batch, count]) => count !== (sizeOf.get(batch) ?? count));
    const lost = batches
      .filter((b) => b.outcome.kind === "answer" && b.outcome.status === 200)
      .filter((b) => b.ids.some((id) => !storedIds.has(id)));

    const few = <T>(items: T[], show: (item: T) => string) =>
      items
        .slice(0, 5)
        .map(show)
        .concat(items.length > 5 ? [`… and ${items.length - 5} more`] : []);
    return [
      ...few(
        counts,
        (c) =>
          `user ${c.user_id} event ${c.event_id}: media rows (all, photos, videos) ${c.kept}, user_events ${c.counted ?? "missing"}`,
      ),
      ...few(
        lists,
        (l) =>
          `user ${l.user_id} event ${l.event_id}: stored list [${l.listed.join(" ")}] but media rows [${l.rows.join(" ")}]`,
      ),
      ...few(partial, ([batch, count]) => `batch ${batch}: ${count} of ${sizeOf.get(batch)} items stored`),
      ...few(
        lost,
        (b) =>
          `batch ${b.batchKey} was acknowledged but ${b.ids.filter((id) => !storedIds.has(id)).length} items are missing`,
      ),
    ];
  } finally {
    await client.end({ timeout: 1 });
  }
}
