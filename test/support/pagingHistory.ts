import { expect } from "bun:test";
import { createUser, type EventFixture, seedCatalog, sendMedia } from "./catalogFixtures.ts";
import { startTestServer, type TestServer } from "./server.ts";

/** A catalog built for paging a history, and a user who keeps media at all of its paging events. */

export const PAGING_VENUE = { id: 1, latitude: 10, longitude: 10 };
export const TWIN_VENUE = { id: 2, latitude: -10, longitude: -10 };
export const SPARE_VENUE = { id: 3, latitude: 20, longitude: 20 };
const DAY_MS = 86_400_000;
const FIRST_START = Date.UTC(2024, 0, 1, 20);

/**
 * Sixty events two days apart at one venue, with ids deliberately out of time order, plus a twin at
 * another venue starting at the same instant as the newest one (the id decides between them).
 */
export const paging: (EventFixture & { startMs: number })[] = Array.from({ length: 60 }, (_, i) => {
  const startMs = FIRST_START + i * 2 * DAY_MS;
  return {
    id: 1000 + ((i * 37) % 60),
    venueId: PAGING_VENUE.id,
    startsAtLocal: new Date(startMs).toISOString().slice(0, 19),
    startMs,
    performers: [{ id: 1, isHeadliner: true }],
  };
});
const newest = paging.at(-1) as (typeof paging)[number];
export const twin = {
  id: 5000,
  venueId: TWIN_VENUE.id,
  startsAtLocal: newest.startsAtLocal,
  startMs: newest.startMs,
};
export const spare = [1, 2, 3, 4, 5, 6].map((n) => ({
  id: 6000 + n,
  venueId: SPARE_VENUE.id,
  startsAtLocal: `2023-0${n}-01T20:00:00`,
  startMs: Date.UTC(2023, n - 1, 1, 20),
}));

/** The order the history must follow: start instant, then event id, both descending. */
export const expectedOrder = [...paging, twin]
  .sort((a, b) => b.startMs - a.startMs || b.id - a.id)
  .map((e) => e.id);

export const during = (event: { startMs: number }, minutes = 60) =>
  new Date(event.startMs + minutes * 60_000).toISOString();

export function coordinates(venue: { latitude: number; longitude: number }) {
  return { latitude: venue.latitude, longitude: venue.longitude };
}

export type PagingServer = { server: TestServer; key: string; otherKey: string; pagingUser: string };

/** A test server with the paging catalog and `pagingUser`, who keeps two items at each paging event and one at the twin. */
export async function startPagingServer(): Promise<PagingServer> {
  const server = await startTestServer();
  const key = (await server.partner("acme")).sandbox;
  const otherKey = (await server.partner("globex")).sandbox;
  await seedCatalog(server, {
    venues: [PAGING_VENUE, TWIN_VENUE, SPARE_VENUE],
    performers: [{ id: 1, name: "House Band" }],
    events: [...paging, twin, ...spare],
  });
  const pagingUser = await createUser(server, key, "pager@example.com");
  // Two items per event, sent newest capture first, so the media order is the server's doing.
  const media = paging.flatMap((e) => [
    { id: `${e.id}-b`, taken_at: during(e, 90), ...coordinates(PAGING_VENUE) },
    { id: `${e.id}-a`, taken_at: during(e, 30), ...coordinates(PAGING_VENUE) },
  ]);
  media.push({ id: "twin", taken_at: during(twin), ...coordinates(TWIN_VENUE) });
  for (let i = 0; i < media.length; i += 200) {
    const response = await sendMedia(server, key, pagingUser, media.slice(i, i + 200));
    expect(response.status).toBe(200);
  }
  return { server, key, otherKey, pagingUser };
}
