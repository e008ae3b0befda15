import { sql } from "drizzle-orm";
import { type ImportReport, type ImportSuccess, importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import type { Store } from "../../src/store/db.ts";

/** Catalog lines and catalog-table readers shared by the import tests. */

export const venue = (id: number, zone: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "venue",
    id,
    name: `Venue ${id}`,
    city: "Somewhere",
    country: "US",
    latitude: 40.75,
    longitude: -73.99,
    timezone: zone,
    ...extra,
  });
export const performer = (id: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: "performer", id, name: `Act ${id}`, category: "rock", ...extra });
export const event = (
  id: number,
  venueId: number,
  startsAtLocal: string,
  extra: Record<string, unknown> = {},
) =>
  JSON.stringify({
    type: "event",
    id,
    name: `Event ${id}`,
    venue_id: venueId,
    starts_at_local: startsAtLocal,
    performers: [],
    ...extra,
  });

export const baseCatalog = [
  venue(1, "America/New_York", { radius_m: 300, region: "NY" }),
  venue(2, "Australia/Sydney"),
  performer(10),
  performer(11, { image_url: "https://example.com/11.jpg" }),
  event(100, 1, "2025-03-09T02:30:00", {
    performers: [
      { id: 10, is_headliner: true },
      { id: 11, is_headliner: false },
    ],
  }),
  event(101, 1, "2025-11-02T01:30:00", { ends_at_local: "2025-11-02T04:00:00", licensed: false }),
  event(102, 2, "2025-10-05T02:30:00", { performers: [{ id: 11 }] }),
];

export function succeeded(report: ImportReport): ImportSuccess {
  if (!report.ok) throw new Error(`import failed: ${JSON.stringify(report.errors)}`);
  return report;
}

export type EventRow = {
  id: number;
  name: string;
  starts_at: Date;
  ends_at: Date | null;
  licensed: boolean;
  xmin: string;
};

export async function eventRows(store: Store): Promise<EventRow[]> {
  const rows = await store.rows<EventRow>(
    sql`select id, name, starts_at, ends_at, licensed, xmin::text as xmin from events order by id`,
  );
  return rows.map((r) => ({
    ...r,
    starts_at: new Date(r.starts_at),
    ends_at: r.ends_at === null ? null : new Date(r.ends_at),
  }));
}

export async function version(store: Store): Promise<number> {
  const [row] = await store.rows<{ version: string }>(
    sql`select version::text from catalog_state where id = 1`,
  );
  return Number(row?.version ?? 0);
}

export async function lineup(store: Store, eventId: number) {
  return store.rows<{ performer_id: number; is_headliner: boolean | null; position: number }>(
    sql`select performer_id, is_headliner, position from event_performers where event_id = ${eventId} order by position`,
  );
}

/**
 * Re-imports one stored event with its licence changed, as an operator's catalog file would: the way a
 * licence changes in production, so whatever copies the import keeps in step follow.
 */
export async function relicense(store: Store, eventId: number, licensed: boolean): Promise<void> {
  const [stored] = await store.rows<{
    name: string;
    venue_id: number;
    starts_at_local: string;
    ends_at_local: string | null;
  }>(sql`select name, venue_id, starts_at_local, ends_at_local from events where id = ${eventId}`);
  if (stored === undefined) throw new Error(`event ${eventId} is not in the catalog`);
  const billing = await store.rows<{ id: number; is_headliner: boolean | null }>(
    sql`select performer_id as id, is_headliner from event_performers where event_id = ${eventId} order by position`,
  );
  const line = event(eventId, stored.venue_id, stored.starts_at_local, {
    name: stored.name,
    ends_at_local: stored.ends_at_local,
    licensed,
    performers: billing,
  });
  succeeded(await importCatalog(store, memoryLines([line], 1)));
}
