import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  canonicalTimeZone,
  instantOf,
  localTextToInstant,
  parseLocalDateTime,
} from "../src/store/catalog/localTime.ts";

const iso = (text: string, zone: string) => {
  const ms = localTextToInstant(text, zone);
  return ms === null ? null : new Date(ms).toISOString();
};

describe("local catalog times read in the venue's zone (docs/api.md §5)", () => {
  test("an ordinary time takes the zone's offset", () => {
    expect(iso("2025-07-04T20:00:00", "America/New_York")).toBe("2025-07-05T00:00:00.000Z");
    expect(iso("2025-01-15T20:00:00", "Europe/Paris")).toBe("2025-01-15T19:00:00.000Z");
    expect(iso("2025-01-15T20:00:00", "UTC")).toBe("2025-01-15T20:00:00.000Z");
  });

  test("a time in the spring-forward gap moves forward by the gap", () => {
    // 02:00 EST jumps to 03:00 EDT: 02:30 does not exist and becomes 03:30 EDT.
    expect(iso("2025-03-09T02:30:00", "America/New_York")).toBe("2025-03-09T07:30:00.000Z");
    expect(iso("2025-03-09T03:30:00", "America/New_York")).toBe("2025-03-09T07:30:00.000Z");
    expect(iso("2025-03-30T02:15:00", "Europe/Berlin")).toBe("2025-03-30T01:15:00.000Z");
  });

  test("a time in the fall-back overlap takes the earlier instant", () => {
    // 01:30 happens first in EDT (UTC-4), then again in EST (UTC-5): the EDT reading wins.
    expect(iso("2025-11-02T01:30:00", "America/New_York")).toBe("2025-11-02T05:30:00.000Z");
    // London repeats 01:00-02:00 (BST, then GMT): 01:30 BST is 00:30Z.
    expect(iso("2025-10-26T01:30:00", "Europe/London")).toBe("2025-10-26T00:30:00.000Z");
  });

  test("southern hemisphere: Sydney's October gap and April overlap", () => {
    // DST starts 2025-10-05 02:00 AEST (+10) -> 03:00 AEDT (+11).
    expect(iso("2025-10-05T02:30:00", "Australia/Sydney")).toBe("2025-10-04T16:30:00.000Z");
    // DST ends 2025-04-06 03:00 AEDT -> 02:00 AEST; 02:30 first happens in AEDT.
    expect(iso("2025-04-06T02:30:00", "Australia/Sydney")).toBe("2025-04-05T15:30:00.000Z");
  });

  test("Lord Howe's half-hour shift", () => {
    // 02:00 +10:30 -> 02:30 +11:00 on 2025-10-05: 02:15 moves forward 30 minutes to 02:45 +11:00.
    expect(iso("2025-10-05T02:15:00", "Australia/Lord_Howe")).toBe("2025-10-04T15:45:00.000Z");
    // 02:00 +11:00 -> 01:30 +10:30 on 2025-04-06: 01:45 first happens at +11:00.
    expect(iso("2025-04-06T01:45:00", "Australia/Lord_Howe")).toBe("2025-04-05T14:45:00.000Z");
  });

  test("Samoa's skipped day moves forward by the whole day", () => {
    expect(iso("2011-12-30T12:00:00", "Pacific/Apia")).toBe("2011-12-30T22:00:00.000Z");
  });

  test("the cached fast path always agrees with Temporal", () => {
    const zones = Intl.supportedValuesOf("timeZone");
    const localTime = fc.record({
      year: fc.integer({ min: 1970, max: 2040 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 28 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.constantFrom(0, 15, 30, 45, 59),
      second: fc.integer({ min: 0, max: 59 }),
    });
    fc.assert(
      fc.property(localTime, fc.constantFrom(...zones), (local, zone) => {
        const expected = new Temporal.PlainDateTime(
          local.year,
          local.month,
          local.day,
          local.hour,
          local.minute,
          local.second,
        ).toZonedDateTime(zone, { disambiguation: "compatible" }).epochMilliseconds;
        expect(instantOf(local, zone)).toBe(expected);
      }),
      { numRuns: 20_000 },
    );
  });

  test("every quarter hour of 2024 in four zones with transitions agrees with Temporal", () => {
    for (const zone of ["America/New_York", "Australia/Lord_Howe", "America/Santiago", "Africa/Casablanca"]) {
      for (let ms = Date.UTC(2024, 0, 1); ms < Date.UTC(2025, 0, 1); ms += 15 * 60_000) {
        const d = new Date(ms);
        const local = {
          year: d.getUTCFullYear(),
          month: d.getUTCMonth() + 1,
          day: d.getUTCDate(),
          hour: d.getUTCHours(),
          minute: d.getUTCMinutes(),
          second: 0,
        };
        const expected = new Temporal.PlainDateTime(
          local.year,
          local.month,
          local.day,
          local.hour,
          local.minute,
        ).toZonedDateTime(zone, { disambiguation: "compatible" }).epochMilliseconds;
        if (instantOf(local, zone) !== expected) throw new Error(`${zone} ${d.toISOString()} disagrees`);
      }
    }
  });
});

describe("parseLocalDateTime", () => {
  test("accepts the exact shape with a real date", () => {
    expect(parseLocalDateTime("2024-02-29T23:59:59")).toEqual({
      year: 2024,
      month: 2,
      day: 29,
      hour: 23,
      minute: 59,
      second: 59,
    });
  });

  test.each([
    "2024-02-30T20:00:00",
    "2023-02-29T20:00:00",
    "2025-04-31T20:00:00",
    "2025-13-01T20:00:00",
    "2025-00-10T20:00:00",
    "2025-01-00T20:00:00",
    "2025-01-01T24:00:00",
    "2025-01-01T23:60:00",
    "2025-01-01T23:59:60",
    "2025-01-01T20:00:00Z",
    "2025-01-01T20:00:00.000",
    "2025-01-01 20:00:00",
    "2025-1-01T20:00:00",
    "1899-12-31T20:00:00",
    "+2025-01-01T20:00",
    "２０２５-01-01T20:00:00",
    "",
  ])("rejects %p", (text) => {
    expect(parseLocalDateTime(text)).toBeNull();
  });
});

describe("canonicalTimeZone", () => {
  test("accepts IANA zones and links, spelled as the database spells them", () => {
    expect(canonicalTimeZone("Europe/Paris")).toBe("Europe/Paris");
    expect(canonicalTimeZone("america/new_york")).toBe("America/New_York");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    expect(canonicalTimeZone("Etc/GMT+5")).toBe("Etc/GMT+5");
  });

  test.each(["Mars/Olympus_Mons", "+05:00", "EST+5", "Europe/Paris ", "", "Europe//Paris", "../etc/passwd"])(
    "rejects %p",
    (zone) => {
      expect(canonicalTimeZone(zone)).toBeNull();
    },
  );
});
