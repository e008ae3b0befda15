/** POST /v1/users/{user_id}/media: the length bounds of an item's descriptive strings (docs/api.md §4). */
import { describe, expect, test } from "bun:test";
import { AT_VENUE_1, DURING_100, mediaTestFile, photo } from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

/** Each bounded member with its limit in characters (Unicode code points), in the schema's order. */
const BOUNDS = {
  filename: 255,
  thumbnail_url: 2048,
  device_make: 255,
  device_model: 255,
  device_lens_model: 255,
} as const;

const FIELDS = Object.keys(BOUNDS) as (keyof typeof BOUNDS)[];

/** A string of exactly `length` characters, of `unit` repeated (an emoji counts once). */
const text = (length: number, unit = "a") => unit.repeat(length);

/** A thumbnail_url of exactly `length` characters. */
const url = (length: number) => {
  const prefix = "https://img.example/";
  return prefix + text(length - prefix.length);
};

const ofLength = (field: keyof typeof BOUNDS, length: number) =>
  field === "thumbnail_url" ? url(length) : text(length);

describe("bounded item strings", () => {
  test("every bounded member at exactly its limit is accepted, and thumbnail_url is echoed in full", async () => {
    const userId = await fixture.newUser();
    const extra = Object.fromEntries(FIELDS.map((field) => [field, ofLength(field, BOUNDS[field])]));
    const response = await fixture.send(userId, [photo("at-limit", DURING_100, AT_VENUE_1, extra)]);
    expect(response.status).toBe(200);
    expect(response.body.matched).toBe(1);
    expect(response.body.events[0].media[0].thumbnail_url).toBe(url(2048));
    expect((await fixture.keptRows(userId)).map((r) => r.media_id)).toEqual(["at-limit"]);
  });

  test("lengths count code points: emoji up to the limit pass, one more is max_length", async () => {
    const userId = await fixture.newUser();
    const emoji = "\u{1F4F7}";
    const full = Object.fromEntries(FIELDS.map((field) => [field, text(BOUNDS[field], emoji)]));
    const accepted = await fixture.send(userId, [photo("emoji", DURING_100, AT_VENUE_1, full)]);
    expect([accepted.status, accepted.body.matched]).toEqual([200, 1]);
    const over = Object.fromEntries(FIELDS.map((field) => [field, text(BOUNDS[field] + 1, emoji)]));
    const refused = await fixture.send(userId, [photo("emoji-over", DURING_100, AT_VENUE_1, over)]);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.items).toEqual(
      FIELDS.map((field) => ({ index: 0, field, reason: "max_length" })),
    );
  });

  for (const field of FIELDS) {
    test(`${field} one character over ${BOUNDS[field]} is invalid_media_item max_length, nothing stored`, async () => {
      const userId = await fixture.newUser();
      const response = await fixture.send(userId, [
        photo("fine", DURING_100, AT_VENUE_1),
        photo("long", DURING_100, AT_VENUE_1, { [field]: ofLength(field, BOUNDS[field] + 1) }),
      ]);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("invalid_media_item");
      expect(response.body.error.details.items).toEqual([{ index: 1, field, reason: "max_length" }]);
      expect(await fixture.keptRows(userId)).toEqual([]);
      expect(await fixture.userState(userId)).toEqual({ last_sync_at: null, received: false });
    });
  }

  test("every offending item is listed, beside other failures, and nothing is stored", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("a", DURING_100, AT_VENUE_1, { filename: text(256) }),
      photo("b", DURING_100, AT_VENUE_1),
      photo("c", DURING_100, AT_VENUE_1, { thumbnail_url: url(4096), device_make: text(300) }),
      photo("d", DURING_100, AT_VENUE_1, { device_model: text(256), media_type: "gif" }),
      photo("e", DURING_100, AT_VENUE_1, { device_lens_model: text(1000), filename: 5 }),
      photo(text(256), DURING_100, AT_VENUE_1, { thumbnail_url: url(2049) }),
    ]);
    expect(response.status).toBe(400);
    expect(response.body.error.details.items).toEqual([
      { index: 0, field: "filename", reason: "max_length" },
      { index: 2, field: "thumbnail_url", reason: "max_length" },
      { index: 2, field: "device_make", reason: "max_length" },
      { index: 3, field: "media_type", reason: "enum" },
      { index: 3, field: "device_model", reason: "max_length" },
      { index: 4, field: "filename", reason: "type" },
      { index: 4, field: "device_lens_model", reason: "max_length" },
      { index: 5, field: "id", reason: "max_length" },
      { index: 5, field: "thumbnail_url", reason: "max_length" },
    ]);
    expect(await fixture.keptRows(userId)).toEqual([]);
    expect(await fixture.userState(userId)).toEqual({ last_sync_at: null, received: false });
  });

  test("a 1.9 MB thumbnail_url is refused with a short answer, so no later answer repeats it", async () => {
    const userId = await fixture.newUser();
    const huge = photo("huge", DURING_100, AT_VENUE_1, { thumbnail_url: url(1_900_000) });
    const refused = await fixture.send(userId, [huge]);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.items).toEqual([
      { index: 0, field: "thumbnail_url", reason: "max_length" },
    ]);
    expect(JSON.stringify(refused.body).length).toBeLessThan(1024);
    const next = await fixture.send(userId, [photo("small", DURING_100, AT_VENUE_1)]);
    expect(next.status).toBe(200);
    expect(next.body.events[0].media).toEqual([
      { media_id: "small", taken_at: "2025-07-04T21:00:00.000Z", media_type: "photo" },
    ]);
  });
});
