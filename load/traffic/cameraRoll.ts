import type { IndexEvent, IndexVenue, MatchSettings } from "../../src/shards/matcher.ts";
import type { Random } from "../../src/store/catalog/generate/random.ts";
import {
  burstSize,
  eventsPerYear,
  offset,
  type Point,
  placeAtVenue,
  roundCoordinate,
  timeAtEvent,
  VIDEO_SHARE_AT_EVENTS,
} from "./attendance.ts";
import type { CatalogSample } from "./sample.ts";

/** A media item exactly as a partner sends it (docs/api.md §4). */
export type MediaItem = {
  id: string;
  taken_at: string;
  latitude?: number;
  longitude?: number;
  media_type: "photo" | "video";
  filename: string;
  duration_seconds?: number;
  thumbnail_url?: string;
  device_make: string;
  device_model: string;
};

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const YEAR_MS = 365 * DAY_MS;
const PHONES = [
  "iPhone 15 Pro",
  "iPhone 14",
  "iPhone 13 mini",
  "iPhone 12",
  "iPhone 16 Pro Max",
  "iPhone SE",
];

/** Where ordinary photos are taken: the shares that make a roll mostly home and work. */
const HOME_SHARE = 0.6;
const WORK_SHARE = 0.25;
/** Screenshots and edited images carry no location: rejected per item as missing_coordinates. */
const NO_LOCATION_SHARE = 0.01;
/** Share of everyday items that are videos (at events it is VIDEO_SHARE_AT_EVENTS). */
const VIDEO_SHARE = 0.08;

const hex = (value: number, digits: number) => value.toString(16).toUpperCase().padStart(digits, "0");

/** An attended event, with the venue it is at. */
type Attended = { event: IndexEvent; venue: IndexVenue };

/**
 * One user's camera roll, produced newest first the way a full library scan reads it. Ordinary photos
 * arrive at random intervals across the span, mostly at home and at work; at each attended event (real
 * catalog events) a burst of photos and videos is taken inside the match window and the venue's radius.
 */
export class CameraRoll {
  private readonly home: Point;
  private readonly work: Point;
  private readonly phone: string;
  private readonly meanGapMs: number;
  private readonly spanStartMs: number;
  private cursorMs: number;
  private sequence = 0;
  private readonly burst: MediaItem[] = [];

  constructor(
    private readonly random: Random,
    private readonly sample: CatalogSample,
    private readonly settings: MatchSettings,
    private readonly user: number,
    /** Attended events, newest first. */
    private readonly attended: Attended[],
    span: { startMs: number; endMs: number; items: number },
  ) {
    const anchor = attended[0]?.venue ?? random.pick(sample.venues);
    this.home = offset(anchor, random.int(3_000, 15_000), random.float() * 2 * Math.PI);
    this.work = offset(this.home, random.int(2_000, 10_000), random.float() * 2 * Math.PI);
    this.phone = random.pick(PHONES);
    this.spanStartMs = span.startMs;
    this.cursorMs = span.endMs;
    this.meanGapMs = (span.endMs - span.startMs) / span.items;
  }

  /** The next older item, or null once the scan has passed the start of the roll. */
  next(): MediaItem | null {
    const queued = this.burst.shift();
    if (queued) return queued;
    const takenAtMs = this.cursorMs - Math.ceil(-Math.log(1 - this.random.float()) * this.meanGapMs);
    const upcoming = this.attended[0];
    if (upcoming && upcoming.event.startsAtMs + 180 * MINUTE_MS >= takenAtMs) {
      this.attended.shift();
      this.queueBurst(upcoming);
      return this.next();
    }
    if (takenAtMs < this.spanStartMs) return null;
    this.cursorMs = takenAtMs;
    return this.item(takenAtMs, this.placeOrdinary(), this.random.chance(VIDEO_SHARE));
  }

  private placeOrdinary(): Point | null {
    if (this.random.chance(NO_LOCATION_SHARE)) return null;
    const draw = this.random.float();
    if (draw < HOME_SHARE)
      return offset(this.home, this.random.int(0, 40), this.random.float() * 2 * Math.PI);
    if (draw < HOME_SHARE + WORK_SHARE) {
      return offset(this.work, this.random.int(0, 80), this.random.float() * 2 * Math.PI);
    }
    // Out and about: somewhere in a city with live venues, rarely close enough to one to match.
    const city = this.random.pick(this.sample.venues);
    return offset(city, this.random.int(1_000, 25_000), this.random.float() * 2 * Math.PI);
  }

  /** Photos at an event: inside the match window and well inside the venue radius, so they match. */
  private queueBurst({ event, venue }: Attended): void {
    const times: number[] = [];
    for (let i = burstSize(this.random); i > 0; i--)
      times.push(timeAtEvent(this.random, event, this.settings));
    times.sort((a, b) => b - a);
    for (const takenAtMs of times) {
      const place = placeAtVenue(this.random, venue, this.settings);
      this.burst.push(this.item(takenAtMs, place, this.random.chance(VIDEO_SHARE_AT_EVENTS)));
    }
    this.cursorMs = Math.min(this.cursorMs, times[times.length - 1] ?? this.cursorMs);
  }

  private item(takenAtMs: number, place: Point | null, video: boolean): MediaItem {
    const sequence = this.sequence++;
    const id = `${hex(this.user, 8)}-${hex(this.random.int(0, 0xffff), 4)}-4${hex(this.random.int(0, 0xfff), 3)}-${hex(
      0x8000 | (sequence >>> 16),
      4,
    )}-${hex(sequence & 0xffff, 4)}${hex(this.random.int(0, 0xffffffff), 8)}/L0/001`;
    const number = hex(sequence % 10_000, 4);
    const item: MediaItem = {
      id,
      taken_at: new Date(takenAtMs).toISOString(),
      media_type: video ? "video" : "photo",
      filename: video ? `IMG_${number}.MOV` : `IMG_${number}.HEIC`,
      device_make: "Apple",
      device_model: this.phone,
    };
    if (place) {
      item.latitude = roundCoordinate(place.latitude);
      item.longitude = roundCoordinate(place.longitude);
    }
    if (video) item.duration_seconds = this.random.int(3, 180);
    if (this.random.chance(0.5))
      item.thumbnail_url = `https://cdn.partner.example/thumbs/${id.slice(0, 36)}.jpg`;
    return item;
  }
}

/**
 * Plans one user's roll: a span of two to eight years ending near the newest sampled event, a library of
 * 2,000 to 12,000 items, and one to six real catalog events a year attended inside that span.
 */
export function planCameraRoll(
  random: Random,
  sample: CatalogSample,
  venueById: ReadonlyMap<number, IndexVenue>,
  settings: MatchSettings,
  user: number,
): CameraRoll {
  const events = sample.events;
  const first = events[0]?.startsAtMs ?? 0;
  const last = events[events.length - 1]?.startsAtMs ?? 0;
  const endMs = last - Math.floor(random.float() * 0.1 * (last - first)) + DAY_MS;
  const startMs = Math.max(first - DAY_MS, endMs - random.int(2, 8) * YEAR_MS);
  const lower = lowerBound(events, startMs);
  const upper = lowerBound(events, endMs);
  const years = (endMs - startMs) / YEAR_MS;
  const wanted = Math.min(upper - lower, Math.max(1, Math.round(years * eventsPerYear(random))));
  const attended: Attended[] = [];
  for (let i = 0; i < wanted; i++) {
    const event = events[random.int(lower, upper - 1)];
    const venue = event ? venueById.get(event.venueId) : undefined;
    if (event && venue && !attended.some((a) => a.event.id === event.id)) attended.push({ event, venue });
  }
  attended.sort((a, b) => b.event.startsAtMs - a.event.startsAtMs);
  return new CameraRoll(random, sample, settings, user, attended, {
    startMs,
    endMs,
    items: random.int(2_000, 12_000),
  });
}

/** Index of the first event starting at or after `ms`. */
function lowerBound(events: readonly IndexEvent[], ms: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((events[middle]?.startsAtMs ?? 0) < ms) low = middle + 1;
    else high = middle;
  }
  return low;
}
