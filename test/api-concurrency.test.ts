import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Matcher } from "../src/shards/matcher.ts";
import { createUser, seedCatalog, sendMedia } from "./support/catalogFixtures.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

/**
 * Batches racing each other, the sync high-water mark, and atomicity. The matcher of this server can be
 * switched to misbehave, to prove a failed batch leaves nothing behind.
 */

type Fault = "none" | "throw" | "unknown-event";
let fault: Fault = "none";

const faulty = (inner: Matcher): Matcher => ({
  async match(queries) {
    if (fault === "throw") throw new Error("matcher down");
    const answers = await inner.match(queries);
    if (fault === "unknown-event" && answers.length > 0) {
      answers[answers.length - 1] = {
        eventId: 999_999,
        venueId: 1,
        licensed: true,
        place: { distanceShare: 0, timeShare: 0, before: false },
        venue: { latitude: 0, longitude: 0, radiusM: 500 },
      };
    }
    return answers;
  },
  version: () => inner.version(),
  close: () => inner.close(),
});

let server: TestServer;
let key: string;

const VENUES = [1, 2, 3].map((id) => ({ id, latitude: id * 10, longitude: id * 10 }));
const EVENTS = VENUES.map((v) => ({ id: v.id * 100, venueId: v.id, startsAtLocal: "2025-05-01T20:00:00" }));
const TAKEN_AT = "2025-05-01T21:00:00Z";

beforeAll(async () => {
  server = await startTestServer({}, { wrapMatcher: faulty });
  key = (await server.partner("acme")).sandbox;
  await seedCatalog(server, { venues: VENUES, events: EVENTS });
});

afterAll(async () => {
  await server.close();
});

let users = 0;
const newUser = () => createUser(server, key, `race${++users}@example.com`);

/** An item at venue 1, 2 or 3 (its event), or nowhere (0). */
const item = (id: string, venue: number, type: "photo" | "video" = "photo") => ({
  id,
  taken_at: TAKEN_AT,
  latitude: venue * 10,
  longitude: venue * 10,
  media_type: type,
});

/** user_events rows whose counts differ from the media actually kept: must always be empty. */
async function drift(userId: string) {
  return server.store.rows(sql`
    select ue.event_id, ue.media_count, ue.photo_count, ue.video_count, k.media, k.photos, k.videos
    from user_events ue
    left join lateral (
      select count(*)::int as media,
             (count(*) filter (where m.media_type = 'photo'))::int as photos,
             (count(*) filter (where m.media_type = 'video'))::int as videos
      from media m where m.user_id = ue.user_id and m.event_id = ue.event_id
    ) k on true
    where ue.user_id = ${userId}
      and (ue.media_count, ue.photo_count, ue.video_count) <> (k.media, k.photos, k.videos)`);
}

async function snapshot(userId: string) {
  const media = await server.store.rows(
    sql`select media_id, event_id, media_type from media where user_id = ${userId} order by media_id`,
  );
  const history = await server.store.rows(
    sql`select event_id, media_count, photo_count, video_count from user_events where user_id = ${userId}
        order by event_id`,
  );
  const user = await server.store.rows(
    sql`select last_sync_at, received_since_sync from users where id = ${userId}`,
  );
  return { media, history, user };
}

describe("concurrent batches of one user", () => {
  test("items moving between events in racing batches never make the counts drift", async () => {
    const userId = await newUser();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let round = 0; round < 6; round++) {
      const batches = Array.from({ length: 4 }, () =>
        Array.from({ length: 40 }, (_, i) =>
          item(`m${(i * 7 + random(60)) % 60}`, random(4), random(3) ? "photo" : "video"),
        ).filter((m, i, all) => all.findIndex((o) => o.id === m.id) === i),
      );
      const responses = await Promise.all(batches.map((batch) => sendMedia(server, key, userId, batch)));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(await drift(userId)).toEqual([]);
    }
    const [counts] = await server.store.rows<{ rows: number; ids: number }>(
      sql`select count(*)::int as rows, count(distinct media_id)::int as ids from media where user_id = ${userId}`,
    );
    expect(counts?.rows).toBe(counts?.ids);
  });

  test("identical batches sent at once keep one copy of each item", async () => {
    const userId = await newUser();
    const batch = Array.from({ length: 50 }, (_, i) => item(`same${i}`, (i % 3) + 1));
    const responses = await Promise.all([1, 2, 3].map(() => sendMedia(server, key, userId, batch)));
    expect(responses.map((r) => r.body.matched)).toEqual([50, 50, 50]);
    const { media, history } = await snapshot(userId);
    expect(media).toHaveLength(50);
    expect(history.map((h) => (h as { media_count: number }).media_count)).toEqual([17, 17, 16]);
  });
});

describe("last_sync_at high-water mark", () => {
  test("never moves backwards: a later mark already stored wins over this batch's time", async () => {
    const userId = await newUser();
    const later = new Date(Date.now() + 3_600_000);
    await server.store.rows(
      sql`update users set last_sync_at = ${later.toISOString()}::timestamptz where id = ${userId}`,
    );
    const response = await sendMedia(server, key, userId, [item("a", 1)]);
    expect(response.body.last_sync_at).toBe(later.toISOString());
  });

  test("a batch that started before another committed answers with the later mark", async () => {
    const userId = await newUser();
    const client = server.store.client;
    if (client === null) throw new Error("these tests run on PostgreSQL");
    let pending: ReturnType<typeof sendMedia> | undefined;
    const committed = await client.begin(async (tx) => {
      await tx`select 1 from users where id = ${userId} for update`;
      pending = sendMedia(server, key, userId, [item("a", 1)]);
      // Wait until the batch's transaction has begun and is queued behind this one's row lock. Asked on
      // another connection: inside a transaction pg_stat_activity is a snapshot frozen at first read.
      for (let tries = 0; ; tries++) {
        const [waiting] = await client<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike '%open_user_batch%'`;
        if ((waiting?.n ?? 0) > 0) break;
        if (tries > 300) throw new Error("the batch never reached the lock");
        await Bun.sleep(10);
      }
      const [row] = await tx<{ mark: string }[]>`
        update users set last_sync_at = clock_timestamp() where id = ${userId}
        returning to_char(last_sync_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as mark`;
      return row?.mark;
    });
    const response = await pending;
    expect(response?.status).toBe(200);
    expect(response?.body.last_sync_at).toBe(committed);
  });

  test("racing batches all answer a mark at least as late as the one stored before, and the max is kept", async () => {
    const userId = await newUser();
    const first = await sendMedia(server, key, userId, [item("first", 1)]);
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => sendMedia(server, key, userId, [item(`r${i}`, (i % 3) + 1)])),
    );
    const marks = responses.map((r) => r.body.last_sync_at as string);
    for (const mark of marks) expect(mark >= first.body.last_sync_at).toBe(true);
    const { user } = await snapshot(userId);
    const stored = new Date(String((user[0] as { last_sync_at: string }).last_sync_at)).toISOString();
    expect(stored).toBe([...marks].sort().at(-1) as string);
  });
});

describe("a failed batch stores nothing", () => {
  const failing = async (mode: Fault) => {
    const userId = await newUser();
    await sendMedia(server, key, userId, [item("kept", 1), item("moving", 2)]);
    await server.call("POST", `/v1/users/${userId}/sync-complete`, { key, body: { photos_processed: 2 } });
    const before = await snapshot(userId);
    fault = mode;
    try {
      const response = await sendMedia(server, key, userId, [
        item("moving", 3),
        item("new", 1),
        item("x", 2),
      ]);
      expect(response.status).toBe(500);
      expect(response.body.error.code).toBe("internal_error");
    } finally {
      fault = "none";
    }
    expect(await snapshot(userId)).toEqual(before);
  };

  test("when writing fails midway (a match naming an event that does not exist)", async () => {
    await failing("unknown-event");
  });

  test("when matching fails", async () => {
    await failing("throw");
  });
});
