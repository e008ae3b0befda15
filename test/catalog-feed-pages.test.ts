import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFeedFiles } from "../src/store/catalog/feeds/feedFiles.ts";
import type { FeedEvent, FeedPage } from "../src/store/catalog/feeds/feedPage.ts";
import { isSameShow, linkedShow, type ShowFacts } from "../src/store/catalog/feeds/linking.ts";
import { readSeatGeekPage } from "../src/store/catalog/feeds/seatgeek.ts";
import { readTicketmasterPage } from "../src/store/catalog/feeds/ticketmaster.ts";

/** The feed readers on answer pages written from the providers' documentation (test/fixtures/feeds). */

const FIXTURES = join(import.meta.dir, "fixtures", "feeds");
const TICKETMASTER = join(FIXTURES, "ticketmaster-page.json");
const SEATGEEK = join(FIXTURES, "seatgeek-pages.jsonl");
const TICKETMASTER_TBA = join(FIXTURES, "ticketmaster-tba-page.json");

const tmPage = (): FeedPage => readTicketmasterPage(JSON.parse(readFileSync(TICKETMASTER, "utf8")), "tm");
const sgPages = (): FeedPage[] =>
  readFileSync(SEATGEEK, "utf8")
    .trim()
    .split("\n")
    .map((line, i) => readSeatGeekPage(JSON.parse(line), `sg line ${i + 1}`));

function eventOf(page: FeedPage, key: string): FeedEvent {
  const event = page.events.find((e) => e.key === key);
  if (event === undefined) throw new Error(`no event ${key}`);
  return event;
}

describe("Ticketmaster Discovery v2 event search pages", () => {
  test("string ids and coordinates sent as strings", () => {
    const page = tmPage();
    const garden = page.venues.find((v) => v.key === "KovZpZA7AAEA");
    expect(garden).toEqual({
      key: "KovZpZA7AAEA",
      name: "Madison Square Garden",
      city: "New York",
      region: "NY",
      country: "US",
      latitude: 40.7505005,
      longitude: -73.9916006,
      timezone: "America/New_York",
    });
    expect(eventOf(page, "vvG1zZ9pbKjzAs")).toMatchObject({
      venueKey: "KovZpZA7AAEA",
      startsAtLocal: "2025-07-04T20:00:00",
      endsAtLocal: null,
      status: "scheduled",
      timeUnknown: false,
      performers: [
        { key: "K8vZ9171o57", isHeadliner: true },
        { key: "K8vZ917Gku7", isHeadliner: false },
      ],
    });
  });

  test("attractions' genres, else segments, become categories", () => {
    const categories = Object.fromEntries(tmPage().performers.map((p) => [p.name, p.category]));
    expect(categories).toEqual({ "The Example Band": "Rock", "Opening Act": "Music" });
  });

  test("statuses: cancelled, postponed, rescheduled, and a date to be decided", () => {
    const page = tmPage();
    expect(eventOf(page, "vvG1zZ9pCancel").status).toBe("cancelled");
    expect(eventOf(page, "vvG1zZ9pPostpo").status).toBe("postponed");
    expect(eventOf(page, "vvG1zZ9pResche")).toMatchObject({
      status: "rescheduled",
      startsAtLocal: "2025-07-08T21:00:00",
    });
    expect(eventOf(page, "vvG1zZ9pDateTBD")).toMatchObject({ status: "date_tbd", timeUnknown: true });
  });

  test("time TBA and no specific time: the date at 00:00:00, time unknown", () => {
    const page = tmPage();
    for (const key of ["vvG1zZ9pTimeTBA", "vvG1zZ9pNoSpec"]) {
      expect(eventOf(page, key)).toMatchObject({ status: "scheduled", timeUnknown: true });
    }
    expect(eventOf(page, "vvG1zZ9pTimeTBA").startsAtLocal).toBe("2025-07-10T00:00:00");
    expect(eventOf(page, "vvG1zZ9pNoSpec").startsAtLocal).toBe("2025-07-11T00:00:00");
  });

  test("a multi-day event takes its end; a venue without a zone gets one from its coordinates", () => {
    const page = tmPage();
    expect(eventOf(page, "vvG1zZ9pFestiv")).toMatchObject({
      startsAtLocal: "2025-04-11T12:00:00",
      endsAtLocal: "2025-04-13T23:00:00",
    });
    expect(page.venues.find((v) => v.key === "KovZpa2yne")?.timezone).toBe("America/Los_Angeles");
  });

  test("what a page leaves out of local dates and times is read from dateTime (UTC) in the venue's zone", () => {
    const venue = { id: "KovZ1", name: "Arena", location: { latitude: "33.4457", longitude: "-112.0712" } };
    const page = readTicketmasterPage(
      {
        _embedded: {
          events: [
            {
              id: "E1",
              name: "A festival whose end is an instant",
              // The event's zone, for a venue that names none: it wins over the coordinates' (Phoenix).
              dates: {
                timezone: "America/Denver",
                start: { localDate: "2025-04-11", localTime: "12:00:00", dateTime: "2025-04-11T18:00:00Z" },
                end: { localDate: "2025-04-13", dateTime: "2025-04-14T05:30:00Z", approximate: false },
              },
              _embedded: { venues: [venue] },
            },
            {
              id: "E2",
              name: "A show with its start as an instant only",
              dates: { start: { localDate: "2025-05-02", dateTime: "2025-05-03T02:30:00Z" } },
              _embedded: { venues: [{ ...venue, id: "KovZ2" }] },
            },
          ],
        },
      },
      "tm",
    );
    expect(page.venues.map((v) => v.timezone)).toEqual(["America/Denver", "America/Phoenix"]);
    expect(eventOf(page, "E1")).toMatchObject({
      startsAtLocal: "2025-04-11T12:00:00",
      endsAtLocal: "2025-04-13T23:30:00",
      timeUnknown: false,
    });
    expect(eventOf(page, "E2")).toMatchObject({ startsAtLocal: "2025-05-02T19:30:00", timeUnknown: false });
  });

  test("an event at no listed venue is placed at its place, one venue for every import of that place", () => {
    const event = (id: string) => ({
      id,
      name: "A parade",
      dates: { start: { localDate: "2025-06-28", localTime: "12:00:00" } },
      place: {
        address: { line1: "Fifth Avenue at 36th Street" },
        city: { name: "New York" },
        state: { stateCode: "NY" },
        country: { countryCode: "US" },
        location: { latitude: "40.7496", longitude: "-73.9830" },
      },
    });
    const first = readTicketmasterPage({ _embedded: { events: [event("P1")] } }, "tm");
    const again = readTicketmasterPage({ _embedded: { events: [event("P2")] } }, "tm");
    expect(first.venues).toEqual([
      {
        key: "place:40.7496,-73.983",
        name: "Fifth Avenue at 36th Street",
        city: "New York",
        region: "NY",
        country: "US",
        latitude: 40.7496,
        longitude: -73.983,
        timezone: "America/New_York",
      },
    ]);
    expect(eventOf(first, "P1")).toMatchObject({
      venueKey: "place:40.7496,-73.983",
      startsAtLocal: "2025-06-28T12:00:00",
    });
    expect(eventOf(again, "P2").venueKey).toBe(eventOf(first, "P1").venueKey);
    expect(first.skipped).toEqual([]);
  });

  test("several venues: the first with coordinates; a venue without coordinates is reported and skipped", () => {
    const page = tmPage();
    expect(eventOf(page, "vvG1zZ9pTwoVen").venueKey).toBe("KovZ9177Arf");
    expect(page.venues.some((v) => v.key === "KovZ917Ahkk")).toBe(false);
    expect(page.events.some((e) => e.key === "vvG1zZ9pNoCoor")).toBe(false);
    expect(page.skipped).toContainEqual({
      place: "tm events[9]",
      message: "event vvG1zZ9pNoCoor skipped: no venue with usable coordinates",
    });
  });

  test("venues under _embedded.venue, as the documented response structure names them", () => {
    const page = readTicketmasterPage(JSON.parse(readFileSync(TICKETMASTER_TBA, "utf8")), "tba");
    expect(eventOf(page, "vvG1VZKS5pr1qy")).toMatchObject({
      venueKey: "KovZpZAaEldA",
      startsAtLocal: "2025-03-09T10:00:00",
      performers: [{ key: "K8vZ917uc57", isHeadliner: true }],
    });
    expect(page.performers.find((p) => p.key === "K8vZ917uc57")).toMatchObject({
      category: "Golf",
      imageUrl: "https://s1.ticketm.net/dam/a/196/example_RETINA_PORTRAIT_16_9.jpg",
    });
  });

  test("a date to be announced without a date: read as undated, for the import to resolve", () => {
    const answer = JSON.parse(readFileSync(TICKETMASTER_TBA, "utf8"));
    const page = readTicketmasterPage(answer, "tba");
    expect(page.events.map((e) => e.key)).toEqual(["vvG1VZKS5pr1qy"]);
    expect(page.undated).toMatchObject([
      { key: "vvG1zZ9pbKjzAs", status: "date_tbd", venueKey: "KovZpZA7AAEA", place: "tba events[1]" },
      { key: "vvG1zZ9pNewTBA", status: "date_tbd", venueKey: "KovZpZA7AAEA", place: "tba events[2]" },
    ]);
    expect(page.skipped).toEqual([]);
    const scheduled = readTicketmasterPage(
      { _embedded: { events: [{ ...answer._embedded.events[2], id: "vvNoDate", dates: { start: {} } }] } },
      "p",
    );
    expect(scheduled.skipped.map((s) => s.message)).toEqual(["event vvNoDate skipped: no start date"]);
  });

  test("an empty result page is an answer; a page of another shape is not", () => {
    expect(
      readTicketmasterPage({ page: { size: 20, totalElements: 0, totalPages: 0, number: 0 } }, "p").events,
    ).toEqual([]);
    expect(() => readTicketmasterPage({ events: [] }, "p")).toThrow("not a Ticketmaster");
    expect(() => readTicketmasterPage({ _embedded: { events: [{ name: "No id" }] } }, "p")).toThrow(
      "p events[0]: id: expected a string or a number",
    );
  });
});

describe("SeatGeek Platform events pages", () => {
  test("numeric ids kept as text; the primary performer headlines; genres become categories", () => {
    const [first] = sgPages();
    if (first === undefined) throw new Error("no page");
    expect(eventOf(first, "5001")).toMatchObject({
      venueKey: "8",
      startsAtLocal: "2025-07-04T20:00:00",
      status: "scheduled",
      timeUnknown: false,
      performers: [
        { key: "1001", isHeadliner: true },
        { key: "1002", isHeadliner: false },
      ],
    });
    expect(first.performers.map((p) => [p.key, p.category])).toContainEqual(["1002", "Pop"]);
  });

  test("time_tbd drops the placeholder 03:30; cancelled; date_tbd", () => {
    const [first, second] = sgPages();
    if (first === undefined || second === undefined) throw new Error("no pages");
    expect(eventOf(first, "5002")).toMatchObject({ startsAtLocal: "2025-07-12T00:00:00", timeUnknown: true });
    expect(eventOf(first, "5003").status).toBe("cancelled");
    expect(eventOf(second, "5005")).toMatchObject({ status: "date_tbd", timeUnknown: true });
  });

  test("string coordinates, a zone from them, and the end from enddatetime_utc at the venue", () => {
    const [, second] = sgPages();
    if (second === undefined) throw new Error("no page");
    expect(second.venues.find((v) => v.key === "1245")).toMatchObject({
      latitude: 34.043,
      longitude: -118.2673,
      timezone: "America/Los_Angeles",
    });
    expect(eventOf(second, "5004")).toMatchObject({
      startsAtLocal: "2025-09-01T19:30:00",
      endsAtLocal: "2025-09-01T23:00:00",
    });
  });

  test("without datetime_local, the start is datetime_utc at the venue", () => {
    const page = readSeatGeekPage(
      {
        events: [
          {
            id: 7001,
            title: "A show",
            datetime_utc: "2025-09-02T02:30:00",
            venue: { id: 12, name: "Hall", location: { lat: 34.043, lon: -118.2673 } },
          },
        ],
      },
      "sg",
    );
    expect(eventOf(page, "7001")).toMatchObject({ startsAtLocal: "2025-09-01T19:30:00", timeUnknown: false });
  });

  test("no date at all: a show not to be matched is read as undated, a scheduled one skipped", () => {
    const hall = { id: 12, name: "Hall", location: { lat: 34.043, lon: -118.2673 } };
    const page = readSeatGeekPage(
      {
        events: [
          { id: 7002, title: "Called off", status: "cancelled", venue: hall },
          { id: 7003, title: "Some day", date_tbd: true, venue: hall },
          { id: 7004, title: "Soon", venue: hall },
        ],
      },
      "sg",
    );
    expect(page.events).toEqual([]);
    expect(page.undated).toMatchObject([
      { key: "7002", status: "cancelled", venueKey: "12", place: "sg events[0]" },
      { key: "7003", status: "date_tbd", venueKey: "12", place: "sg events[1]" },
    ]);
    expect(page.skipped.map((s) => s.message)).toEqual(["event 7004 skipped: no start date"]);
  });

  test("a venue without coordinates is reported and its event skipped", () => {
    const page = readSeatGeekPage(
      {
        events: [
          { id: 9, title: "Nowhere", datetime_local: "2025-01-01T20:00:00", venue: { id: 3, name: "TBA" } },
        ],
      },
      "p",
    );
    expect(page.events).toEqual([]);
    expect(page.skipped.map((s) => s.message)).toEqual([
      "venue 3 has no usable coordinates",
      "event 9 skipped: no venue with usable coordinates",
    ]);
  });
});

describe("answer files", () => {
  test("a pretty-printed page is one page; JSON Lines are one page a line", () => {
    expect(readFeedFiles("ticketmaster", [TICKETMASTER]).pages).toHaveLength(1);
    const read = readFeedFiles("seatgeek", [SEATGEEK]);
    expect(read.errors).toEqual([]);
    expect(read.pages).toHaveLength(2);
  });

  test("a page of the wrong provider or broken JSON is reported with its place", () => {
    expect(readFeedFiles("seatgeek", [TICKETMASTER]).errors).toEqual([
      { place: TICKETMASTER, message: "not a SeatGeek events answer (no events array)" },
    ]);
    expect(readFeedFiles("ticketmaster", [SEATGEEK]).errors.map((e) => e.place)).toEqual([
      `${SEATGEEK} line 1`,
      `${SEATGEEK} line 2`,
    ]);
  });
});

describe("the linking rule", () => {
  const show: ShowFacts = {
    name: "The Example Band",
    latitude: 40.7505,
    longitude: -73.9934,
    startsMs: Date.parse("2025-07-05T00:00:00Z"),
    localDate: "2025-07-04",
    timeUnknown: false,
    performerNames: ["The Example Band", "Opening Act"],
  };
  const other = { ...show, name: "Something Else", performerNames: ["Nobody"] };

  test("near in place and time, with a shared performer or a similar name", () => {
    expect(isSameShow({ ...other, performerNames: ["the example band!"] }, show)).toBe(true);
    expect(isSameShow({ ...other, name: "The Example Band: Live" }, show)).toBe(true);
    expect(isSameShow(other, show)).toBe(false);
  });

  test("not when the venues are over 500 m apart or the starts over 2 hours", () => {
    expect(isSameShow({ ...show, latitude: show.latitude + 0.006 }, show)).toBe(false);
    expect(isSameShow({ ...show, latitude: show.latitude + 0.004 }, show)).toBe(true);
    expect(isSameShow({ ...show, startsMs: show.startsMs + 2 * 3_600_000 + 1000 }, show)).toBe(false);
  });

  test("an unknown time links on the same local date only", () => {
    const undated = { ...show, timeUnknown: true, startsMs: Date.parse("2025-07-04T04:00:00Z") };
    expect(isSameShow(undated, show)).toBe(true);
    expect(isSameShow({ ...undated, localDate: "2025-07-05" }, show)).toBe(false);
  });

  test("of several, the closest start wins", () => {
    const early = { ...show, id: 1, startsMs: show.startsMs - 3_600_000 };
    const close = { ...show, id: 2, startsMs: show.startsMs + 600_000 };
    expect(linkedShow(show, [early, close])?.id).toBe(2);
    expect(linkedShow(other, [early, close])).toBeNull();
  });
});

describe("answer files that are not answers", () => {
  test("a broken pretty-printed page is one error; a byte-order mark is fine", () => {
    const dir = mkdtempSync(join(tmpdir(), "rollcall-feed-files-"));
    try {
      const broken = join(dir, "broken.json");
      writeFileSync(broken, '{\n  "_embedded": {\n    "events": [\n');
      expect(readFeedFiles("ticketmaster", [broken]).errors).toEqual([
        { place: broken, message: "not valid JSON: neither one answer page nor JSON Lines of pages" },
      ]);
      const marked = join(dir, "marked.json");
      writeFileSync(marked, `\uFEFF${readFileSync(TICKETMASTER, "utf8")}`);
      expect(readFeedFiles("ticketmaster", [marked]).pages).toHaveLength(1);
      expect(
        readFeedFiles("ticketmaster", [join(dir, "missing.json"), dir]).errors.map((e) => e.message),
      ).toEqual(["cannot be read", "cannot be read"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
