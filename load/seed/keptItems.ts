import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import { scoreItem } from "../../src/confidence/confidence.ts";
import type { IndexEvent, IndexVenue, MatchSettings } from "../../src/shards/matcher.ts";
import { Random } from "../../src/store/catalog/generate/random.ts";
import { backfillConfidence } from "../../src/store/confidenceBackfill.ts";
import type { Store } from "../../src/store/db.ts";
import { mediaListJson, storedItemJson } from "../../src/store/eventDetails.ts";
import {
  burstSize,
  eventsPerYear,
  placeAtVenue,
  roundCoordinate,
  timeAtEvent,
  VIDEO_SHARE_AT_EVENTS,
} from "../traffic/attendance.ts";
import type { CatalogSample } from "../traffic/sample.ts";

/**
 * Data-scale mode: users with kept media written straight into PostgreSQL with COPY, consistent with
 * what the API would have stored for them: a `users` row, `media` rows at real licensed events (inside
 * the window and the venue radius) with their confidence weights and spots, one `user_events` row per
 * (user, event) with its counts and confidence, its media list in `user_event_media`, and the user's
 * spot rows in `user_venue_spots`. Items are placed by the item rule as matching places them; the spot
 * rows and every history row's confidence are then left to the confidence backfill, which scores by the
 * batch statement's definition, so a seeded database needs nothing more before it is measured.
 */

export type SeedOptions = {
  keptItems: number;
  partnerId: string;
  seed: number;
  settings: MatchSettings;
  onProgress?: (rowsWritten: number) => void;
};

export type SeedReport = { users: number; media: number; userEvents: number };

type PlannedUser = { id: string; events: IndexEvent[]; bursts: number[] };

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, "0");
/** Rows per chunk handed to COPY: big enough to amortise the stream overhead, small enough to stay flat. */
const CHUNK_ROWS = 2_000;

/**
 * Ids ascend with the user index, and each user's rows are written in key order, so every index of
 * media and user_events grows at its right edge during the load instead of splitting pages at random.
 */
function userId(seed: number, index: number): string {
  return `${hex(seed >>> 0, 8)}-0000-4000-8000-${hex(index, 12)}`;
}

/** Users as the traffic generator makes them (one to six events a year over two to eight years). */
function planUsers(random: Random, events: readonly IndexEvent[], options: SeedOptions): PlannedUser[] {
  const users: PlannedUser[] = [];
  let remaining = options.keptItems;
  while (remaining > 0) {
    const count = Math.max(1, random.int(2, 8) * eventsPerYear(random));
    const chosen = new Map<number, IndexEvent>();
    for (let i = 0; i < count; i++) {
      const event = random.pick(events);
      chosen.set(event.id, event);
    }
    const user: PlannedUser = { id: userId(options.seed, users.length), events: [], bursts: [] };
    for (const event of [...chosen.values()].sort((a, b) => a.id - b.id)) {
      if (remaining === 0) break;
      const burst = Math.min(remaining, burstSize(random));
      user.events.push(event);
      user.bursts.push(burst);
      remaining -= burst;
    }
    users.push(user);
  }
  return users;
}

function* userLines(users: readonly PlannedUser[], partnerId: string): Generator<string> {
  const now = new Date().toISOString();
  for (const [i, user] of users.entries()) {
    const email = `kept-${i}@load.example`;
    yield `${user.id}\t${partnerId}\t${email}\t${email}\tt\t${now}\n`;
  }
}

/** Groups lines into chunks for COPY, reporting the lines passed so far. */
function* chunked(lines: Iterable<string>, onProgress?: (rows: number) => void): Generator<string> {
  let chunk: string[] = [];
  let rows = 0;
  for (const line of lines) {
    chunk.push(line);
    if (chunk.length === CHUNK_ROWS) {
      rows += chunk.length;
      yield chunk.join("");
      chunk = [];
      onProgress?.(rows);
    }
  }
  if (chunk.length > 0) yield chunk.join("");
  onProgress?.(rows + chunk.length);
}

/**
 * The media rows of every user; the user_events line of each attended event (a small fraction of the
 * media) is collected on the side and written by a second COPY afterwards, without its confidence.
 */
function* mediaLines(
  random: Random,
  users: readonly PlannedUser[],
  venues: ReadonlyMap<number, IndexVenue>,
  settings: MatchSettings,
  userEventLines: string[],
): Generator<string> {
  for (const user of users) {
    let sequence = 0;
    const counts: { eventId: number; media: number; videos: number }[] = [];
    for (const [e, event] of user.events.entries()) {
      const venue = venues.get(event.venueId);
      if (!venue) throw new Error(`event ${event.id} has no venue in the sample`);
      const times: number[] = [];
      for (let i = user.bursts[e] ?? 0; i > 0; i--) times.push(timeAtEvent(random, event, settings));
      times.sort((a, b) => a - b);
      let videos = 0;
      for (const takenAtMs of times) {
        const place = placeAtVenue(random, venue, settings);
        const video = random.chance(VIDEO_SHARE_AT_EVENTS);
        if (video) videos++;
        const mediaId = `${user.id.slice(0, 8)}-${hex(sequence++, 8)}/L0/001`;
        const file = `IMG_${hex(sequence % 10_000, 4)}.${video ? "MOV" : "HEIC"}`;
        const thumbnail = random.chance(0.5)
          ? `https://cdn.partner.example/thumbs/${mediaId.slice(0, 17)}.jpg`
          : "\\N";
        // Scored at the coordinates as stored (rounded), as a batch and the backfill see them.
        const item = {
          eventId: event.id,
          venueId: venue.id,
          latitude: roundCoordinate(place.latitude),
          longitude: roundCoordinate(place.longitude),
          takenAtMs,
          startsAtMs: event.startsAtMs,
          endsAtMs: event.endsAtMs,
        };
        const { weight, spot, inCore } = scoreItem({ ...item, venue }, settings);
        yield `${user.id}\t${mediaId}\t${event.id}\t${venue.id}\t${new Date(takenAtMs).toISOString()}\t` +
          `${item.latitude}\t${item.longitude}\t${video ? "video" : "photo"}\t` +
          `${file}\t${video ? random.int(3, 180) : "\\N"}\t${thumbnail}\tApple\tiPhone 15 Pro\t\\N\t` +
          `${weight}\t${spot.row}\t${spot.column}\t${inCore ? "t" : "f"}\n`;
      }
      counts.push({ eventId: event.id, media: times.length, videos });
    }
    for (const { eventId, media, videos } of counts) {
      userEventLines.push(`${user.id}\t${eventId}\t${media}\t${media - videos}\t${videos}\n`);
    }
  }
}

async function copy(connection: postgres.ReservedSql, into: string, lines: Iterable<string>): Promise<void> {
  const writable = await connection.unsafe(`copy ${into} from stdin`).writable();
  await pipeline(Readable.from(lines), writable);
}

/**
 * Loads the data set in one transaction-free pass on a reserved connection. Foreign-key triggers are
 * skipped for the load (session_replication_role = replica): every referenced user and event exists by
 * construction, and checking 10 million references one by one would double the load time.
 */
/** Every history row's media list, as the batches that kept the media would have rendered it. */
const RENDER_LISTS = new PgDialect().sqlToQuery(sql`
  insert into user_event_media (user_id, event_id, media_json)
  select ue.user_id, ue.event_id, ${mediaListJson(sql`(
    select ${storedItemJson(sql`m`)} as item_json, m.taken_at, m.media_id from media m
    where m.user_id = ue.user_id and m.event_id = ue.event_id
  )`)}
  from user_events ue`).sql;

export async function seedKeptItems(
  store: Store,
  sample: CatalogSample,
  options: SeedOptions,
): Promise<SeedReport> {
  const licensed = sample.events.filter((event) => event.licensed);
  if (licensed.length === 0) throw new Error("the catalog sample has no licensed event to keep media at");
  const random = new Random(options.seed);
  const users = planUsers(random, licensed, options);
  const venues = new Map(sample.venues.map((venue) => [venue.id, venue]));
  const userEventLines: string[] = [];
  if (store.client === null) throw new Error("kept items are loaded into PostgreSQL (COPY)");
  const connection = await store.client.reserve();
  try {
    await connection`set session_replication_role = replica`;
    await copy(
      connection,
      "users (id, partner_id, email, email_key, has_synced, last_sync_at)",
      chunked(userLines(users, options.partnerId)),
    );
    await copy(
      connection,
      "media (user_id, media_id, event_id, venue_id, taken_at, latitude, longitude, media_type, filename, " +
        "duration_seconds, thumbnail_url, device_make, device_model, device_lens_model, weight, spot_row, " +
        "spot_col, in_core)",
      chunked(mediaLines(random, users, venues, options.settings, userEventLines), options.onProgress),
    );
    // user_events copies facts of its event (start, local start, venue, licence): they come from the
    // catalog in one join, as a batch takes them from it.
    await connection`create temp table seed_user_events (user_id uuid, event_id integer,
      media_count integer, photo_count integer, video_count integer)`;
    await copy(
      connection,
      "seed_user_events (user_id, event_id, media_count, photo_count, video_count)",
      chunked(userEventLines),
    );
    await connection`insert into user_events (user_id, event_id, starts_at, starts_at_local, venue_id,
        licensed, media_count, photo_count, video_count)
      select s.user_id, s.event_id, e.starts_at, e.starts_at_local, e.venue_id, e.licensed,
        s.media_count, s.photo_count, s.video_count
      from seed_user_events s join events e on e.id = s.event_id`;
    await connection`drop table seed_user_events`;
    await connection.unsafe(RENDER_LISTS);
    await connection`reset session_replication_role`;
    await connection`analyze users, media, user_events, user_event_media`;
  } finally {
    connection.release();
  }
  await backfillConfidence(store, options.settings, { replace: false });
  await store.rows(sql`analyze user_events, user_venue_spots`);
  return { users: users.length, media: options.keptItems, userEvents: userEventLines.length };
}
