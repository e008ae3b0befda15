/** POST /v1/users/{user_id}/media: request validation (the per-item rejections: api-media-rejections). */
import { describe, expect, test } from "bun:test";
import { sendMedia } from "./support/catalogFixtures.ts";
import { AT_VENUE_1, DURING_100, mediaTestFile, photo } from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

describe("request-level validation", () => {
  const invalidItem = async (media: unknown[]) => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, media);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_media_item");
    expect(await fixture.keptRows(userId)).toEqual([]);
    expect(await fixture.userState(userId)).toEqual({ last_sync_at: null, received: false });
    return response.body.error.details.items;
  };

  test("every kind of offending member is named with its reason", async () => {
    const good = photo("ok", DURING_100);
    const items = await invalidItem([
      good,
      "not an object",
      { taken_at: DURING_100 },
      { ...good, id: 42 },
      { ...good, id: "" },
      { ...good, id: "x".repeat(256) },
      { ...good, id: "t", taken_at: 1720126800 },
      { ...good, id: "la", latitude: "40.75" },
      { ...good, id: "mt", media_type: "audio" },
      { ...good, id: "mt2", media_type: 1 },
      { ...good, id: "d", duration_seconds: -1 },
      { ...good, id: "f", filename: ["a"] },
      { ...good, id: "th", thumbnail_url: 7 },
      { ...good, id: "dv", device_make: true },
      { ...good, id: null },
      [good],
    ]);
    expect(items).toEqual([
      { index: 1, field: "item", reason: "type" },
      { index: 2, field: "id", reason: "required" },
      { index: 3, field: "id", reason: "type" },
      { index: 4, field: "id", reason: "required" },
      { index: 5, field: "id", reason: "max_length" },
      { index: 6, field: "taken_at", reason: "type" },
      { index: 7, field: "latitude", reason: "type" },
      { index: 8, field: "media_type", reason: "enum" },
      { index: 9, field: "media_type", reason: "type" },
      { index: 10, field: "duration_seconds", reason: "range" },
      { index: 11, field: "filename", reason: "type" },
      { index: 12, field: "thumbnail_url", reason: "type" },
      { index: 13, field: "device_make", reason: "type" },
      { index: 14, field: "id", reason: "type" },
      { index: 15, field: "item", reason: "type" },
    ]);
  });

  test("an item with several bad members lists each of them", async () => {
    const items = await invalidItem([{ id: 5, latitude: "x", media_type: "gif" }]);
    expect(items).toEqual([
      { index: 0, field: "id", reason: "type" },
      { index: 0, field: "latitude", reason: "type" },
      { index: 0, field: "media_type", reason: "enum" },
    ]);
  });

  test("all offending items are listed, however many (beyond the framework's 64-error cap)", async () => {
    const media = Array.from({ length: 150 }, (_, i) =>
      i % 2 === 0 ? { id: i } : photo(`ok${i}`, DURING_100),
    );
    const items = await invalidItem(media);
    expect(items.map((i: { index: number }) => i.index)).toEqual(Array.from({ length: 75 }, (_, i) => i * 2));
  });

  test("an id of exactly 255 characters and a duration of 0 are valid", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("y".repeat(255), DURING_100, AT_VENUE_1, { duration_seconds: 0, media_type: "video" }),
    ]);
    expect(response.status).toBe(200);
    expect(response.body.matched).toBe(1);
  });

  test("an id's length is counted in characters: 255 emoji pass, 256 are max_length", async () => {
    const userId = await fixture.newUser();
    const emoji = "\u{1F600}";
    const accepted = await fixture.send(userId, [photo(emoji.repeat(255), DURING_100, AT_VENUE_1)]);
    expect(accepted.status).toBe(200);
    expect(accepted.body.matches[0].media_id).toBe(emoji.repeat(255));
    const refused = await fixture.send(userId, [photo(emoji.repeat(256), DURING_100, AT_VENUE_1)]);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.items).toEqual([{ index: 0, field: "id", reason: "max_length" }]);
  });

  test("empty media array is 400 empty_batch", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, []);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("empty_batch");
  });

  test("more than 200 items is 413 invalid_batch_size with the count, checked before the items", async () => {
    const userId = await fixture.newUser();
    const media = Array.from({ length: 201 }, (_, i) => (i === 0 ? "bad item" : photo(`m${i}`, DURING_100)));
    const response = await fixture.send(userId, media);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe("invalid_batch_size");
    expect(response.body.error.details).toEqual({ received: 201 });
    expect(await fixture.keptRows(userId)).toEqual([]);
  });

  test("exactly 200 items is accepted", async () => {
    const userId = await fixture.newUser();
    const media = Array.from({ length: 200 }, (_, i) => photo(`m${i}`, DURING_100));
    const response = await fixture.send(userId, media);
    expect(response.status).toBe(200);
    expect(response.body.accepted).toBe(200);
    expect(response.body.matched).toBe(200);
    expect(response.body.events[0].media_count).toBe(200);
  });

  test("media missing, not an array, or a body that is not an object is 400 invalid_request", async () => {
    const userId = await fixture.newUser();
    for (const body of [
      {},
      { media: "x" },
      { media: { id: "a" } },
      { media: null },
      [photo("a", DURING_100)],
    ]) {
      const response = await fixture.server.call("POST", `/v1/users/${userId}/media`, {
        key: fixture.key,
        body,
      });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("invalid_request");
    }
    expect(await fixture.userState(userId)).toEqual({ last_sync_at: null, received: false });
  });

  test("unknown members are ignored and null optional members read as absent", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("a", DURING_100, AT_VENUE_1, {
        media_type: null,
        filename: null,
        duration_seconds: null,
        thumbnail_url: null,
        device_make: null,
        future_field: { nested: true },
      }),
    ]);
    expect(response.status).toBe(200);
    expect(response.body.matched).toBe(1);
    expect(response.body.events[0].media).toEqual([
      { media_id: "a", taken_at: "2025-07-04T21:00:00.000Z", media_type: "photo" },
    ]);
  });

  test("an id or another string with an unpaired surrogate is invalid_media_item, and nothing is stored", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("fine", DURING_100, AT_VENUE_1),
      photo("\ud800", DURING_100, AT_VENUE_1),
    ]);
    expect(response.status).toBe(400);
    expect(response.body.error.details.items).toEqual([{ index: 1, field: "id", reason: "type" }]);
    const thumbnail = await fixture.send(userId, [
      photo("thumb", DURING_100, AT_VENUE_1, { thumbnail_url: "https://x.example/\udfff.jpg" }),
    ]);
    expect(thumbnail.body.error.details.items).toEqual([
      { index: 0, field: "thumbnail_url", reason: "type" },
    ]);
    const history = await fixture.server.call("GET", `/v1/users/${userId}/events`, { key: fixture.key });
    expect(history.body.total).toBe(0);
  });

  test("malformed strings are item failures like any other: every item listed, member names too, after the size", async () => {
    const userId = await fixture.newUser();
    const listed = await fixture.send(userId, [
      photo("nul", DURING_100, AT_VENUE_1, { filename: "a\u0000" }),
      photo("gif", DURING_100, AT_VENUE_1, { media_type: "gif" }),
      { ...photo("nul-name", DURING_100, AT_VENUE_1), "z\u0000": 1 },
      photo("\u0000", DURING_100, AT_VENUE_1, { filename: "\u0000" }),
    ]);
    expect(listed.status).toBe(400);
    expect(listed.body.error.details.items).toEqual([
      { index: 0, field: "filename", reason: "type" },
      { index: 1, field: "media_type", reason: "enum" },
      { index: 2, field: "z\u0000", reason: "type" },
      { index: 3, field: "id", reason: "type" },
      { index: 3, field: "filename", reason: "type" },
    ]);
    const oversized = Array.from({ length: 201 }, (_, i) => photo(`p${i}`, DURING_100, AT_VENUE_1));
    oversized[150] = photo("p150", DURING_100, AT_VENUE_1, { filename: "a\u0000" });
    const tooMany = await fixture.send(userId, oversized);
    expect([tooMany.status, tooMany.body.error.code]).toEqual([413, "invalid_batch_size"]);
    expect(await fixture.keptRows(userId)).toEqual([]);
  });

  test("numbers past the range of a double: a coordinate is out of range per item, a duration is range", async () => {
    const userId = await fixture.newUser();
    const rawBody = `{"media": [
      {"id": "far", "taken_at": "${DURING_100}", "latitude": 1e400, "longitude": -73.99},
      {"id": "west", "taken_at": "${DURING_100}", "latitude": 40.75, "longitude": -1e400},
      {"id": "ok", "taken_at": "${DURING_100}", "latitude": 40.75, "longitude": -73.99}]}`;
    const path = `/v1/users/${userId}/media`;
    const json = { "content-type": "application/json" };
    const response = await fixture.server.call("POST", path, { key: fixture.key, rawBody, headers: json });
    expect(response.status).toBe(200);
    expect(response.body.rejected).toEqual([
      { id: "far", reason: "invalid", detail: "latitude_out_of_range" },
      { id: "west", reason: "invalid", detail: "longitude_out_of_range" },
    ]);
    expect(response.body.matched).toBe(1);
    const duration = await fixture.server.call("POST", path, {
      key: fixture.key,
      rawBody: `{"media": [{"id": "long", "taken_at": "${DURING_100}", "duration_seconds": 1e400}]}`,
      headers: json,
    });
    expect(duration.status).toBe(400);
    expect(duration.body.error.details.items).toEqual([
      { index: 0, field: "duration_seconds", reason: "range" },
    ]);
  });

  test("an unknown member beside media is ignored", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.server.call("POST", `/v1/users/${userId}/media`, {
      key: fixture.key,
      body: { media: [photo("a", DURING_100, AT_VENUE_1)], batch_note: "scan 3 of 7" },
    });
    expect([response.status, response.body.matched]).toEqual([200, 1]);
  });

  test("an unknown user, or another partner's user, is 404 user_not_found after the body passed", async () => {
    const userId = await fixture.newUser();
    const unknown = await fixture.send(crypto.randomUUID(), [photo("a", DURING_100)]);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("user_not_found");
    const foreign = await sendMedia(fixture.server, fixture.otherKey, userId, [photo("a", DURING_100)]);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("user_not_found");
    const invalidFirst = await fixture.send(crypto.randomUUID(), []);
    expect(invalidFirst.body.error.code).toBe("empty_batch");
    expect(await fixture.keptRows(userId)).toEqual([]);
  });
});
