/** What a bad catalog line's report says: the field, what it wants, and enough of the value to find it. */
import { describe, expect, test } from "bun:test";
import { parseRecord } from "../src/store/catalog/records.ts";

const venue = (extra: string) =>
  `{"type":"venue","id":1,"name":"V","city":null,"country":null,"latitude":0,"longitude":0,"timezone":"UTC"${extra}}`;

const errorOf = (line: string) => {
  const parsed = parseRecord(line);
  return "error" in parsed ? parsed.error : null;
};

describe("bad-line messages", () => {
  test("a number past a double is named, not shown as null", () => {
    expect(errorOf(venue(',"latitude":1e400'))).toBe(
      "latitude: expected a number from -90 to 90, got Infinity",
    );
  });

  test("a long value is cut to 80 characters with its length", () => {
    const error = errorOf(`{"type":"performer","id":2,"name":"P","image_url":"${"y".repeat(5000)}"}`);
    expect(error).toBe(
      `image_url: expected a string of at most 2000 characters, or null, got "${"y".repeat(79)}… (5002 characters)`,
    );
  });

  test("cut in characters, not halves of an emoji; invisible characters escaped", () => {
    const emoji = errorOf(venue(`,"timezone":"${"\u{1F600}".repeat(100)}"`));
    expect(emoji).toEndWith(`got "${"\u{1F600}".repeat(79)}… (102 characters)`);
    expect(errorOf(`{"type":"performer","id":2,"name":"P","category":["\u2028\u202e"]}`)).toBe(
      'category: expected a string of at most 100 characters, or null, got ["\\u2028\\u202e"]',
    );
  });

  test("a performer that is not an object says what it should be", () => {
    const line = `{"type":"event","id":3,"name":"E","venue_id":1,"starts_at_local":"2025-01-01T20:00:00","performers":[1000]}`;
    expect(errorOf(line)).toBe("performers[0]: expected an object {id, is_headliner}, got 1000");
  });
});
