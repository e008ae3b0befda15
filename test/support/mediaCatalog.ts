import { afterAll, beforeAll } from "bun:test";
import { sql } from "drizzle-orm";
import { createUser, seedCatalog, sendMedia } from "./catalogFixtures.ts";
import { startTestServer, type TestServer } from "./server.ts";

/**
 * The small catalog and helpers of the media batch tests: venue 1 (default radius) hosts events 100
 * (licensed, three performers) and 101 (two days later, unlicensed); venue 2 hosts event 200.
 */
export const AT_VENUE_1 = { latitude: 40.75, longitude: -73.99 };
export const AT_VENUE_2 = { latitude: 34.05, longitude: -118.24 };
export const DURING_100 = "2025-07-04T21:00:00Z";
export const DURING_101 = "2025-07-06T21:00:00Z";
export const DURING_200 = "2025-08-01T20:00:00Z";
export const NOWHERE = { latitude: 0, longitude: 0 };

/**
 * The server of one media test file, filled in by the file's `beforeAll` (see `mediaTestFile`): read
 * its members inside tests only.
 */
export type MediaTestFile = {
  server: TestServer;
  key: string;
  /** A key of another partner. */
  otherKey: string;
  newUser(): Promise<string>;
  /** Sends a batch with `key`. */
  send(userId: string, media: unknown[]): ReturnType<typeof sendMedia>;
  keptRows(userId: string): ReturnType<typeof keptRows>;
  historyRows(userId: string): ReturnType<typeof historyRows>;
  userState(userId: string): ReturnType<typeof userState>;
};

async function startMediaServer(): Promise<
  Omit<MediaTestFile, "send" | "keptRows" | "historyRows" | "userState">
> {
  const server = await startTestServer();
  const key = (await server.partner("acme")).sandbox;
  const otherKey = (await server.partner("globex")).sandbox;
  await seedCatalog(server, {
    venues: [
      { id: 1, ...AT_VENUE_1, name: "Garden", city: "New York", region: "NY", country: "US" },
      { id: 2, ...AT_VENUE_2, name: "Bowl", city: "Los Angeles", region: "CA", country: "US" },
    ],
    performers: [
      { id: 10, name: "Opener", category: "indie", imageUrl: "https://img.example/10.jpg" },
      { id: 11, name: "Star", category: "rock", imageUrl: null },
      { id: 12, name: "Guest", category: null },
    ],
    events: [
      {
        id: 100,
        venueId: 1,
        name: "Summer Show",
        startsAtLocal: "2025-07-04T20:00:00",
        performers: [
          { id: 10, isHeadliner: false },
          { id: 12, isHeadliner: null },
          { id: 11, isHeadliner: true },
        ],
      },
      { id: 101, venueId: 1, startsAtLocal: "2025-07-06T20:00:00", licensed: false },
      { id: 200, venueId: 2, startsAtLocal: "2025-08-01T19:00:00" },
    ],
  });
  let users = 0;
  return { server, key, otherKey, newUser: () => createUser(server, key, `media${++users}@example.com`) };
}

export const photo = (
  id: string,
  takenAt: string,
  where = AT_VENUE_1,
  extra: Record<string, unknown> = {},
) => ({
  id,
  taken_at: takenAt,
  ...where,
  ...extra,
});

function keptRows(server: TestServer, userId: string) {
  return server.store.rows<{ media_id: string; event_id: number; media_type: string }>(
    sql`select media_id, event_id, media_type from media where user_id = ${userId} order by media_id`,
  );
}

function historyRows(server: TestServer, userId: string) {
  return server.store.rows<{
    event_id: number;
    media_count: number;
    photo_count: number;
    video_count: number;
  }>(
    sql`select event_id, media_count, photo_count, video_count from user_events
        where user_id = ${userId} order by event_id`,
  );
}

async function userState(server: TestServer, userId: string) {
  const [row] = await server.store.rows<{ last_sync_at: string | null; received: boolean }>(
    sql`select last_sync_at, received_since_sync as received from users where id = ${userId}`,
  );
  return row;
}

/**
 * Starts the media test server before the file's tests and closes it after them; the returned object
 * is empty until then, so tests read it, never the file's top level.
 */
export function mediaTestFile(): MediaTestFile {
  const file = {} as MediaTestFile;
  beforeAll(async () => {
    const started = await startMediaServer();
    Object.assign(file, started, {
      send: (userId: string, media: unknown[]) => sendMedia(started.server, started.key, userId, media),
      keptRows: (userId: string) => keptRows(started.server, userId),
      historyRows: (userId: string) => historyRows(started.server, userId),
      userState: (userId: string) => userState(started.server, userId),
    });
  });
  afterAll(async () => {
    await file.server.close();
  });
  return file;
}
