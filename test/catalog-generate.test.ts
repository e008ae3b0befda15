import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cityMapping } from "city-timezones";
import { sql } from "drizzle-orm";
import { generateCatalog } from "../src/store/catalog/generate/index.ts";
import { catalogCities } from "../src/store/catalog/generate/places.ts";
import { FIRST_YEAR, LAST_YEAR } from "../src/store/catalog/generate/schedule.ts";
import { importCatalog } from "../src/store/catalog/import.ts";
import { memoryLines } from "../src/store/catalog/lines.ts";
import { canonicalTimeZone, localTextToInstant } from "../src/store/catalog/localTime.ts";
import {
  type CatalogRecord,
  type EventRecord,
  type PerformerRecord,
  parseRecord,
  type VenueRecord,
} from "../src/store/catalog/records.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";

const EVENTS = 5000;

function records(lines: string[]): CatalogRecord[] {
  return lines.map((line, index) => {
    const parsed = parseRecord(line);
    if ("error" in parsed) throw new Error(`line ${index + 1}: ${parsed.error}`);
    return parsed.record;
  });
}

describe("catalog generate", () => {
  const lines = [...generateCatalog({ events: EVENTS, seed: 7 })];
  const all = records(lines);
  const venues = all.filter((r): r is VenueRecord => r.type === "venue");
  const performers = all.filter((r): r is PerformerRecord => r.type === "performer");
  const events = all.filter((r): r is EventRecord => r.type === "event");

  test("is deterministic for a seed and differs between seeds", () => {
    expect([...generateCatalog({ events: EVENTS, seed: 7 })]).toEqual(lines);
    expect([...generateCatalog({ events: EVENTS, seed: 8 })]).not.toEqual(lines);
  });

  test("writes valid records, venues and performers before the events that use them", () => {
    expect(events.length).toBe(EVENTS);
    expect(new Set(events.map((e) => e.id)).size).toBe(EVENTS);
    const venueIds = new Set(venues.map((v) => v.id));
    const performerIds = new Set(performers.map((p) => p.id));
    const firstEvent = all.findIndex((r) => r.type === "event");
    expect(all.slice(firstEvent).every((r) => r.type === "event")).toBe(true);
    for (const e of events) {
      expect(venueIds.has(e.venue_id)).toBe(true);
      for (const p of e.performers) expect(performerIds.has(p.id)).toBe(true);
    }
  });

  test("places venues in real cities with their own IANA zones and size-based radii", () => {
    // Several cities share a name within a country (Springfield), so a venue's zone is one of theirs.
    const zonesByCity = new Map<string, string[]>();
    for (const c of cityMapping) {
      const key = `${c.city}|${c.iso2}`;
      zonesByCity.set(key, [...(zonesByCity.get(key) ?? []), c.timezone]);
    }
    for (const v of venues) {
      expect(zonesByCity.get(`${v.city}|${v.country}`) ?? []).toContain(v.timezone);
      expect(v.radius_m ?? 0).toBeGreaterThanOrEqual(80);
      expect(v.radius_m ?? 0).toBeLessThanOrEqual(5000);
    }
    expect(new Set(venues.map((v) => v.country)).size).toBeGreaterThan(3);
    // Clubs (~100 m) through festival grounds (kilometres): radii vary by venue size.
    expect(Math.min(...venues.map((v) => v.radius_m ?? 0))).toBeLessThan(150);
    expect(Math.max(...venues.map((v) => v.radius_m ?? 0))).toBeGreaterThan(400);
  });

  test("draws cities only from entries with a country code, a zone and coordinates", () => {
    const { cities } = catalogCities();
    expect(cities.length).toBeGreaterThan(1000);
    for (const city of cities) {
      expect(city.country).toMatch(/^[A-Z]{2}$/);
      expect(canonicalTimeZone(city.zone)).toBe(city.zone);
      expect(city.name.length).toBeGreaterThan(0);
      expect(Math.abs(city.lat)).toBeLessThanOrEqual(90);
      expect(Math.abs(city.lng)).toBeLessThanOrEqual(180);
    }
    // The data set's entries without a usable country code (Kosovo, Somaliland) are left out.
    expect(cities.some((c) => c.name === "Pristina")).toBe(false);
  });

  test("schedules plausible events: local evening hours, years, headliners, some unlicensed and multi-day", () => {
    for (const e of events) {
      const year = Number(e.starts_at_local.slice(0, 4));
      const hour = Number(e.starts_at_local.slice(11, 13));
      expect(year).toBeGreaterThanOrEqual(FIRST_YEAR);
      expect(year).toBeLessThanOrEqual(LAST_YEAR);
      expect(hour).toBeGreaterThanOrEqual(12);
      if (e.ends_at_local) expect(e.ends_at_local > e.starts_at_local).toBe(true);
      expect(e.performers.length).toBeGreaterThan(0);
    }
    const unlicensed = events.filter((e) => e.licensed === false).length / EVENTS;
    expect(unlicensed).toBeGreaterThan(0.01);
    expect(unlicensed).toBeLessThan(0.06);
    const festivals = events.filter(
      (e) =>
        e.ends_at_local &&
        e.ends_at_local.slice(0, 10) !== e.starts_at_local.slice(0, 10) &&
        e.performers.length >= 6,
    );
    expect(festivals.length).toBeGreaterThan(0);
    expect(events.some((e) => e.performers.some((p) => p.is_headliner === false))).toBe(true);
    const categories = new Set(performers.map((p) => p.category));
    expect(categories.has("rock")).toBe(true);
    expect(categories.has("comedy")).toBe(true);
  });

  describe("its output imports cleanly into PostgreSQL", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await database.drop();
    });

    test("every record lands, with instants read in each venue's zone", async () => {
      const report = await importCatalog(database.store, memoryLines(lines));
      expect(report.ok).toBe(true);
      if (!report.ok) return;
      expect(report.venues.inserted).toBe(venues.length);
      expect(report.performers.inserted).toBe(performers.length);
      expect(report.events.inserted).toBe(EVENTS);
      const zones = new Map(venues.map((v) => [v.id, v.timezone]));
      const sample = events.filter((_, i) => i % 97 === 0);
      const rows = await database.store.rows<{ id: number; starts_at: Date }>(
        sql`select id, starts_at from events where id = any(${`{${sample.map((e) => e.id).join(",")}}`}::int[])`,
      );
      const stored = new Map(rows.map((r) => [r.id, new Date(r.starts_at).getTime()]));
      for (const e of sample) {
        expect(stored.get(e.id)).toBe(
          localTextToInstant(e.starts_at_local, zones.get(e.venue_id) ?? "") ?? -1,
        );
      }
    });
  });
});
