/** `taken_at` parsing (docs/api.md §4 and §13) against Temporal, the reference it replaced. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseTakenAt, utcText } from "../src/flows/ingest/mediaItems.ts";

const SHAPE = /^(\d{4})-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** The previous implementation: the RFC 3339 shape and ranges checked by hand, the rest left to Temporal. */
function reference(text: string): bigint | null {
  const shape = SHAPE.exec(text);
  if (shape === null) return null;
  const [, year, second, offsetHours, offsetMinutes] = shape;
  if (Number(year) < 1900 || Number(year) > 9999 || Number(second) > 59) return null;
  if (offsetHours !== undefined && (Number(offsetHours) > 23 || Number(offsetMinutes) > 59)) return null;
  try {
    const instant = Temporal.Instant.from(text);
    return instant.epochNanoseconds >= BigInt(Date.UTC(10_000, 0, 1)) * 1_000_000n
      ? null
      : instant.epochNanoseconds;
  } catch {
    return null;
  }
}

const digits = (count: number, max: number) =>
  fc.integer({ min: 0, max }).map((n) => String(n).padStart(count, "0"));

/** Strings of the RFC 3339 shape with every field pushed past its range now and then. */
const candidate = fc
  .record({
    year: fc.oneof(
      fc.integer({ min: 1890, max: 2100 }),
      fc.integer({ min: 9990, max: 9999 }),
      digits(4, 9999),
    ),
    month: digits(2, 13),
    day: digits(2, 32),
    separator: fc.constantFrom("T", "t", " "),
    hour: digits(2, 25),
    minute: digits(2, 61),
    second: digits(2, 61),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
    offset: fc.oneof(
      fc.constantFrom("Z", "z"),
      fc.tuple(fc.constantFrom("+", "-"), digits(2, 25), digits(2, 61)).map(([s, h, m]) => `${s}${h}:${m}`),
    ),
  })
  .map((f) => {
    const fraction = f.fraction === undefined ? "" : `.${f.fraction}`;
    const year = String(f.year).padStart(4, "0");
    return `${year}-${f.month}-${f.day}${f.separator}${f.hour}:${f.minute}:${f.second}${fraction}${f.offset}`;
  });

/** Edits that break the shape in the places a hand-written reader can get wrong. */
const mangled = fc
  .tuple(
    candidate,
    fc.nat(),
    fc.constantFrom("replace", "insert", "delete"),
    fc.constantFrom("0", "9", "-", ":", ".", "T", " ", "Z", "+", "x", "\u0660", ""),
  )
  .map(([text, position, edit, character]) => {
    const at = position % (text.length + 1);
    if (edit === "delete") return text.slice(0, at) + text.slice(at + 1);
    if (edit === "insert") return text.slice(0, at) + character + text.slice(at);
    return text.slice(0, at) + character + text.slice(at + 1);
  });

function agreesWithTemporal(text: string): void {
  const expected = reference(text);
  const parsed = parseTakenAt(text);
  if (expected === null) {
    expect(parsed).toBeNull();
    return;
  }
  expect(parsed).not.toBeNull();
  const flooredToMicroseconds = expected - (((expected % 1000n) + 1000n) % 1000n);
  expect(Temporal.Instant.from(parsed ? utcText(parsed) : "").epochNanoseconds).toBe(flooredToMicroseconds);
  expect(parsed?.ms).toBe(
    Number(expected / 1_000_000n) - (expected < 0n && expected % 1_000_000n !== 0n ? 1 : 0),
  );
}

describe("parseTakenAt", () => {
  test("agrees with Temporal on every RFC 3339-shaped string: same instant (to the stored microsecond), or both refuse", () => {
    fc.assert(fc.property(candidate, agreesWithTemporal), { numRuns: 20_000 });
  });

  test("agrees with Temporal on strings one edit away from that shape", () => {
    fc.assert(fc.property(mangled, agreesWithTemporal), { numRuns: 20_000 });
  });

  test("the edges docs/api.md §13 names", () => {
    const leapDay = parseTakenAt("2024-02-29T12:00:00Z");
    expect(leapDay ? utcText(leapDay) : null).toBe("2024-02-29T12:00:00Z");
    expect(parseTakenAt("2023-02-29T12:00:00Z")).toBeNull();
    expect(parseTakenAt("2024-06-01T24:00:00Z")).toBeNull();
    expect(parseTakenAt("2016-12-31T23:59:60Z")).toBeNull();
    const shifted = parseTakenAt("2024-06-01T20:30:00.123456789+02:00");
    expect(shifted).toEqual({ ms: Date.UTC(2024, 5, 1, 18, 30, 0, 123), fraction: "123456789" });
    expect(shifted ? utcText(shifted) : null).toBe("2024-06-01T18:30:00.123456Z");
    const lastNanosecond = parseTakenAt("9999-12-31T23:59:59.999999999Z");
    expect(lastNanosecond ? utcText(lastNanosecond) : null).toBe("9999-12-31T23:59:59.999999Z");
    const beforeEpoch = parseTakenAt("1969-12-31T23:59:59.5Z");
    expect(beforeEpoch ? utcText(beforeEpoch) : null).toBe("1969-12-31T23:59:59.5Z");
    expect(parseTakenAt("1900-01-01T00:00:00.9995+00:01")?.ms).toBe(Date.UTC(1899, 11, 31, 23, 59, 0, 999));
    expect(parseTakenAt("9999-12-31T23:00:00-01:00")).toBeNull();
    expect(parseTakenAt("2024-06-01T20:30:00")).toBeNull();
    expect(parseTakenAt("2024-06-01")).toBeNull();
  });
});
