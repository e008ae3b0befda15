/**
 * The index of one catalog generation: plain typed arrays, each over its own SharedArrayBuffer, so the
 * main thread and every worker read the same memory and a worker receives it once, when it starts.
 * Nothing here is written after the build, so reads need no Atomics.
 *
 * Memory layout (V venues that have events, E events, C distinct cells, R cell-venue registrations,
 * T hash slots over all shards, B grid blocks that some venue reaches, M fine grid cells some venue
 * reaches, L words of slot lists):
 *
 * | section          | type    | length  | bytes | meaning                                                       |
 * |------------------|---------|---------|-------|---------------------------------------------------------------|
 * | eventWindow      | Float64 | 2E      | 16E   | (from, to) per event, epoch ms: from = starts_at − before,    |
 * |                  |         |         |       | to = (ends_at or start + duration) + after                    |
 * | eventSample      | Float64 | E / 8   | E     | from of every 8th event row: a venue's samples share one line |
 * | eventId          | Int32   | E       | 4E    | catalog event id                                              |
 * | eventLicensed    | Uint32  | E / 32  | E / 8 | bit set when the event is licensed for redistribution         |
 * | venueId          | Int32   | V       | 4V    | catalog venue id                                              |
 * | venueRecord      | Float64 | 8V      | 64V   | one 64-byte record a venue (fields below): one cache line      |
 * | venueEvents      | Uint32  | V + 1   | 4V    | events of venue v are rows venueEvents[v] .. venueEvents[v+1] |
 * | cellVenues       | Int32   | R       | 4R    | venue rows of each cell, one run per cell                     |
 * | slotCell         | Uint32  | 2T      | 8T    | H3 index (low, high) of each hash slot; high 0 = empty        |
 * | slotVenues       | Uint32  | 2T      | 8T    | (first, count) of the slot's run in cellVenues                |
 * | shardSlots       | Uint32  | 2S      | 8S    | (first slot, slot count − 1) of each shard's table            |
 * | blockSlot        | Int32   | 64 800  | 259k  | per 1° block: its row in blockShard/fineWords, or −1          |
 * | blockShard       | Uint16  | B       | 2B    | shard that answers for the block                              |
 * | fineWords        | Uint32  | 3072B   | 12kB  | per 64 fine cells of a block: (bits, bits, marked cells       |
 * |                  |         |         |       | before): 1 where some venue can reach; 256 × 256 cells a block |
 * | fineSlot         | Int32   | M       | 4M    | per marked fine cell: the hash slot of the one H3 cell that   |
 * |                  |         |         |       | holds it, or a list in slotLists (see buildMemo.ts)           |
 * | slotLists        | Int32   | L       | 4L    | distinct lists (count, slots…) of H3 cells a fine cell spans  |
 *
 * A venue record holds, in this order: unit vector x, y, z and the squared chord the venue reaches
 * (a cheap test that only ever rejects), latitude and longitude (for the exact haversine), radius in
 * metres, and the longest window (to − from) of its events. Fields a lookup reads together share a
 * cache line instead of costing a miss each; the bits of a grid word sit beside their rank likewise.
 *
 * Events are sorted by venue, then window start, so a venue's events are one run. The latest window
 * that opened before a capture is found by a binary search on the venue's samples (one cache line)
 * and a scan of at most 8 windows (two lines), where a plain binary search touched a line per probe.
 * Start and end are recovered as from + before and to − after: instants are whole milliseconds below
 * 2^53, so both sums are exact and the time distance equals the reference's to the bit.
 *
 * A cell that straddles blocks of two shards is in both tables; its run in cellVenues is stored once
 * and shared. What the whole index costs an event is in docs/performance.md §3.
 */

/** Event rows per sample in eventSample. */
export const SAMPLE_EVERY = 8;

/** Float64 fields of a venue record. */
export const VENUE_STRIDE = 8;
export const VENUE_X = 0;
export const VENUE_Y = 1;
export const VENUE_Z = 2;
export const VENUE_CHORD2 = 3;
export const VENUE_LATITUDE = 4;
export const VENUE_LONGITUDE = 5;
export const VENUE_RADIUS = 6;
export const VENUE_SPAN = 7;

export type IndexBuffers = {
  generation: number;
  beforeMs: number;
  afterMs: number;
  shards: number;
  eventWindow: SharedArrayBuffer;
  eventSample: SharedArrayBuffer;
  eventId: SharedArrayBuffer;
  eventLicensed: SharedArrayBuffer;
  venueId: SharedArrayBuffer;
  venueRecord: SharedArrayBuffer;
  venueEvents: SharedArrayBuffer;
  cellVenues: SharedArrayBuffer;
  slotCell: SharedArrayBuffer;
  slotVenues: SharedArrayBuffer;
  shardSlots: SharedArrayBuffer;
  blockSlot: SharedArrayBuffer;
  blockShard: SharedArrayBuffer;
  fineWords: SharedArrayBuffer;
  fineSlot: SharedArrayBuffer;
  slotLists: SharedArrayBuffer;
};

export type IndexArrays = {
  eventWindow: Float64Array;
  eventSample: Float64Array;
  eventId: Int32Array;
  eventLicensed: Uint32Array;
  venueId: Int32Array;
  venueRecord: Float64Array;
  venueEvents: Uint32Array;
  cellVenues: Int32Array;
  slotCell: Uint32Array;
  slotVenues: Uint32Array;
  shardSlots: Uint32Array;
  blockSlot: Int32Array;
  blockShard: Uint16Array;
  fineWords: Uint32Array;
  fineSlot: Int32Array;
  slotLists: Int32Array;
};

type TypedArrayConstructor<T> = { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number };

/** A zero-filled typed array over a SharedArrayBuffer of its own. */
export function sharedArray<T>(type: TypedArrayConstructor<T>, length: number): T {
  return new type(new SharedArrayBuffer(Math.max(1, length) * type.BYTES_PER_ELEMENT));
}

export function viewIndex(buffers: IndexBuffers): IndexArrays {
  return {
    eventWindow: new Float64Array(buffers.eventWindow),
    eventSample: new Float64Array(buffers.eventSample),
    eventId: new Int32Array(buffers.eventId),
    eventLicensed: new Uint32Array(buffers.eventLicensed),
    venueId: new Int32Array(buffers.venueId),
    venueRecord: new Float64Array(buffers.venueRecord),
    venueEvents: new Uint32Array(buffers.venueEvents),
    cellVenues: new Int32Array(buffers.cellVenues),
    slotCell: new Uint32Array(buffers.slotCell),
    slotVenues: new Uint32Array(buffers.slotVenues),
    shardSlots: new Uint32Array(buffers.shardSlots),
    blockSlot: new Int32Array(buffers.blockSlot),
    blockShard: new Uint16Array(buffers.blockShard),
    fineWords: new Uint32Array(buffers.fineWords),
    fineSlot: new Int32Array(buffers.fineSlot),
    slotLists: new Int32Array(buffers.slotLists),
  };
}

export function bufferOf(view: { buffer: ArrayBufferLike }): SharedArrayBuffer {
  if (!(view.buffer instanceof SharedArrayBuffer)) throw new TypeError("index arrays must be shared");
  return view.buffer;
}

/** Total bytes of the shared index (what `bytes per event` in the benchmark divides). */
export function indexBytes(buffers: IndexBuffers): number {
  let total = 0;
  for (const value of Object.values(buffers)) {
    if (value instanceof SharedArrayBuffer) total += value.byteLength;
  }
  return total;
}
