import { sql } from "drizzle-orm";
import type { Store } from "../../src/store/db.ts";
import { userEvents } from "../../src/store/schema/index.ts";

/**
 * Writes a user's history rows directly, as the media batch path leaves them, so stats and hiding can
 * be tested on exact shapes (hidden rows, rows whose media count dropped to 0) without matching media.
 * The event facts a row copies come from the catalog, as a batch takes them.
 */
export type KeptAt = {
  eventId: number;
  startsAt: Date;
  photos?: number;
  videos?: number;
  hidden?: boolean;
};

export async function keepMedia(store: Store, userId: string, rows: KeptAt[]): Promise<void> {
  const facts = await store.rows<{
    id: number;
    starts_at_local: string;
    venue_id: number;
    licensed: boolean;
  }>(
    sql`select id, starts_at_local, venue_id, licensed from events
      where id = any(${sql.param(rows.map((row) => row.eventId))}::int[])`,
  );
  const factsOf = new Map(facts.map((fact) => [fact.id, fact]));
  await store.db.insert(userEvents).values(
    rows.map((row) => {
      const fact = factsOf.get(row.eventId);
      if (fact === undefined) throw new Error(`event ${row.eventId} is not in the catalog`);
      const photos = row.photos ?? 1;
      const videos = row.videos ?? 0;
      return {
        userId,
        eventId: row.eventId,
        startsAt: row.startsAt,
        startsAtLocal: fact.starts_at_local,
        venueId: fact.venue_id,
        licensed: fact.licensed,
        mediaCount: photos + videos,
        photoCount: photos,
        videoCount: videos,
        hidden: row.hidden ?? false,
      };
    }),
  );
}
