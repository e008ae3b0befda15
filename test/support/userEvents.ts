import type { Store } from "../../src/store/db.ts";
import { userEvents } from "../../src/store/schema/index.ts";

/**
 * Writes a user's history rows directly, as the media batch path leaves them, so stats and hiding can
 * be tested on exact shapes (hidden rows, rows whose media count dropped to 0) without matching media.
 */
export type KeptAt = {
  eventId: number;
  startsAt: Date;
  photos?: number;
  videos?: number;
  hidden?: boolean;
};

export async function keepMedia(store: Store, userId: string, rows: KeptAt[]): Promise<void> {
  await store.db.insert(userEvents).values(
    rows.map((row) => {
      const photos = row.photos ?? 1;
      const videos = row.videos ?? 0;
      return {
        userId,
        eventId: row.eventId,
        startsAt: row.startsAt,
        mediaCount: photos + videos,
        photoCount: photos,
        videoCount: videos,
        hidden: row.hidden ?? false,
      };
    }),
  );
}
