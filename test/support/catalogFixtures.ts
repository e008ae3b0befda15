import { eventPerformers, events, performers, venues } from "../../src/store/schema/index.ts";
import type { TestServer } from "./server.ts";

export type VenueFixture = {
  id: number;
  latitude: number;
  longitude: number;
  timezone?: string;
  radiusM?: number | null;
  name?: string;
  city?: string | null;
  region?: string | null;
  country?: string | null;
};

export type EventFixture = {
  id: number;
  venueId: number;
  startsAtLocal: string;
  endsAtLocal?: string | null;
  licensed?: boolean;
  name?: string;
  performers?: { id: number; isHeadliner: boolean | null }[];
};

export type PerformerFixture = {
  id: number;
  name?: string;
  category?: string | null;
  imageUrl?: string | null;
};

/** A venue-local time as an instant, the way the catalog importer computes it (docs/api.md §5). */
export function localInstant(local: string, zone: string): Date {
  return new Date(
    Temporal.PlainDateTime.from(local).toZonedDateTime(zone, { disambiguation: "compatible" })
      .epochMilliseconds,
  );
}

/**
 * Writes catalog rows the way an import leaves them (instants resolved in the venue's zone) and makes
 * the server's matcher see them.
 */
export async function seedCatalog(
  server: TestServer,
  catalog: { venues?: VenueFixture[]; performers?: PerformerFixture[]; events?: EventFixture[] },
): Promise<void> {
  const { db } = server.store;
  const venueRows = (catalog.venues ?? []).map((v) => ({
    id: v.id,
    name: v.name ?? `Venue ${v.id}`,
    city: v.city === undefined ? `City ${v.id}` : v.city,
    region: v.region === undefined ? "RG" : v.region,
    country: v.country === undefined ? "US" : v.country,
    latitude: v.latitude,
    longitude: v.longitude,
    timezone: v.timezone ?? "UTC",
    radiusM: v.radiusM ?? null,
  }));
  if (venueRows.length > 0) await db.insert(venues).values(venueRows);
  const performerRows = (catalog.performers ?? []).map((p) => ({
    id: p.id,
    name: p.name ?? `Performer ${p.id}`,
    category: p.category === undefined ? "rock" : p.category,
    imageUrl: p.imageUrl === undefined ? null : p.imageUrl,
  }));
  if (performerRows.length > 0) await db.insert(performers).values(performerRows);
  const zones = new Map(
    (await db.select({ id: venues.id, timezone: venues.timezone }).from(venues)).map((v) => [
      v.id,
      v.timezone,
    ]),
  );
  const eventRows = (catalog.events ?? []).map((e) => {
    const zone = zones.get(e.venueId) ?? "UTC";
    return {
      id: e.id,
      name: e.name ?? `Event ${e.id}`,
      venueId: e.venueId,
      startsAtLocal: e.startsAtLocal,
      endsAtLocal: e.endsAtLocal ?? null,
      startsAt: localInstant(e.startsAtLocal, zone),
      endsAt: e.endsAtLocal ? localInstant(e.endsAtLocal, zone) : null,
      licensed: e.licensed ?? true,
    };
  });
  for (let i = 0; i < eventRows.length; i += 1000)
    await db.insert(events).values(eventRows.slice(i, i + 1000));
  const links = (catalog.events ?? []).flatMap((e) =>
    (e.performers ?? []).map((p, position) => ({
      eventId: e.id,
      performerId: p.id,
      isHeadliner: p.isHeadliner,
      position,
    })),
  );
  if (links.length > 0) await db.insert(eventPerformers).values(links);
  await server.reloadCatalog();
}

/** Creates a user for a partner key and returns its id. */
export async function createUser(server: TestServer, key: string, email: string): Promise<string> {
  const response = await server.call("POST", "/v1/users", { key, body: { email } });
  if (response.status !== 200 && response.status !== 201) {
    throw new Error(`user creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return response.body.user_id as string;
}

/** Sends one media batch for a user. */
export function sendMedia(server: TestServer, key: string, userId: string, media: unknown[]) {
  return server.call("POST", `/v1/users/${userId}/media`, { key, body: { media } });
}
