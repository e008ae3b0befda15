/** POST /v1/users/{user_id}/media: the per-item rejections of docs/api.md §4, which leave the status 200. */
import { describe, expect, test } from "bun:test";
import {
  AT_VENUE_1,
  AT_VENUE_2,
  DURING_100,
  DURING_200,
  mediaTestFile,
  NOWHERE,
  photo,
} from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

describe("per-item rejections", () => {
  test("each rule, in its order, with the status staying 200", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      { id: "no-time", ...AT_VENUE_1 },
      { id: "null-time", taken_at: null, ...AT_VENUE_1 },
      { id: "no-lat", taken_at: DURING_100, longitude: -73.99 },
      { id: "null-lon", taken_at: DURING_100, latitude: 40.75, longitude: null },
      { id: "nothing" },
      { id: "no-time-bad-lat", latitude: 100, longitude: 0 },
      { id: "bad-time-no-lon", taken_at: "garbage", latitude: 1 },
      photo("no-offset", "2025-07-04T21:00:00"),
      photo("feb-30", "2024-02-30T21:00:00Z"),
      photo("hour-24", "2025-07-04T24:00:00Z"),
      photo("second-60", "2016-12-31T23:59:60Z"),
      photo("minute-60", "2025-07-04T21:60:00Z"),
      photo("year-1899", "1899-12-31T23:00:00Z"),
      photo("year-10000", "10000-01-01T00:00:00Z"),
      photo("date-only", "2025-07-04"),
      photo("no-seconds", "2025-07-04T21:00Z"),
      photo("offset-25h", "2025-07-04T21:00:00+25:00"),
      photo("lat-high", DURING_100, { latitude: 90.000001, longitude: 0 }),
      photo("lat-low", DURING_100, { latitude: -91, longitude: 0 }),
      photo("lon-high", DURING_100, { latitude: 0, longitude: 180.5 }),
      photo("lon-low", DURING_100, { latitude: 0, longitude: -181 }),
      photo("dup", DURING_100),
      photo("dup", DURING_200, AT_VENUE_2),
      { id: "dup", ...AT_VENUE_1 },
    ]);
    expect(response.status).toBe(200);
    // Each keeps its specified reason and says which rule it broke (docs/api.md §4, `detail`).
    const reasons = Object.fromEntries(
      response.body.rejected.map((r: { id: string; reason: string; detail: string }) => [
        r.id,
        `${r.reason}: ${r.detail}`,
      ]),
    );
    expect(response.body.rejected).toHaveLength(24 - 1);
    const notADateTime = "invalid: taken_at_not_a_date_time";
    expect(reasons).toEqual({
      "no-time": "missing_taken_at: taken_at_missing",
      "null-time": "missing_taken_at: taken_at_missing",
      "no-lat": "missing_coordinates: latitude_missing",
      "null-lon": "missing_coordinates: longitude_missing",
      nothing: "missing_taken_at: taken_at_missing",
      "no-time-bad-lat": "missing_taken_at: taken_at_missing",
      "bad-time-no-lon": "missing_coordinates: longitude_missing",
      "no-offset": "invalid: taken_at_without_offset",
      "feb-30": notADateTime,
      "hour-24": notADateTime,
      "second-60": notADateTime,
      "minute-60": notADateTime,
      "year-1899": notADateTime,
      "year-10000": notADateTime,
      "date-only": notADateTime,
      "no-seconds": notADateTime,
      "offset-25h": notADateTime,
      "lat-high": "invalid: latitude_out_of_range",
      "lat-low": "invalid: latitude_out_of_range",
      "lon-high": "invalid: longitude_out_of_range",
      "lon-low": "invalid: longitude_out_of_range",
      dup: "missing_taken_at: taken_at_missing",
    });
    expect(response.body.rejected.filter((r: { id: string }) => r.id === "dup")).toEqual([
      { id: "dup", reason: "invalid", detail: "duplicate_id" },
      { id: "dup", reason: "missing_taken_at", detail: "taken_at_missing" },
    ]);
    expect(response.body.accepted).toBe(1);
    expect(response.body.matches).toEqual([
      { media_id: "dup", matched: true, event_id: 100, venue_id: 1, confidence: 0.67 },
    ]);
    expect((await fixture.keptRows(userId)).map((r) => r.event_id)).toEqual([100]);
  });

  test("accepted forms of taken_at: numeric offsets, fractions, lowercase and space separators, edges", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [
      photo("offset", "2025-07-04T16:00:00-05:00"),
      photo("fraction", "2025-07-04T21:00:00.123456789Z"),
      photo("sub-microsecond", "2025-07-04T21:59:59.9999999Z"),
      photo("lower", "2025-07-04t21:00:00z"),
      photo("space", "2025-07-04 21:00:00+00:00"),
      photo("leap-day", "2024-02-29T12:00:00Z", NOWHERE),
      photo("year-1900", "1900-01-01T00:00:00Z", NOWHERE),
      photo("year-9999", "9999-12-31T23:59:59Z", NOWHERE),
      photo("north-pole", DURING_100, { latitude: 90, longitude: -180 }),
      photo("south-pole", DURING_100, { latitude: -90, longitude: 180 }),
    ]);
    expect(response.status).toBe(200);
    expect(response.body.rejected).toEqual([]);
    expect(response.body.accepted).toBe(10);
    expect(response.body.matched).toBe(5);
    const media = response.body.events[0].media;
    expect(media.find((m: { media_id: string }) => m.media_id === "offset").taken_at).toBe(
      "2025-07-04T21:00:00.000Z",
    );
    expect(media.find((m: { media_id: string }) => m.media_id === "fraction").taken_at).toBe(
      "2025-07-04T21:00:00.123Z",
    );
    // Stored floored to the microsecond: rounding would carry it into the next second (or day, or year).
    expect(media.find((m: { media_id: string }) => m.media_id === "sub-microsecond").taken_at).toBe(
      "2025-07-04T21:59:59.999Z",
    );
  });

  test("a batch whose items are all rejected is still 200 and advances the sync mark", async () => {
    const userId = await fixture.newUser();
    const response = await fixture.send(userId, [{ id: "a" }, { id: "b", taken_at: DURING_100 }]);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ accepted: 0, matched: 0, matches: [], events: [] });
    expect(response.body.last_sync_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await fixture.userState(userId)).toMatchObject({ received: false });
  });
});
