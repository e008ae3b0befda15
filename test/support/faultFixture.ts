import { setPartnerLimits } from "../../src/limits/overrides.ts";
import { importCatalog } from "../../src/store/catalog/import.ts";
import { memoryLines } from "../../src/store/catalog/lines.ts";
import { openStore } from "../../src/store/db.ts";
import { createPartner, issueKey } from "../../src/store/keys.ts";
import { event, performer, succeeded, venue } from "./catalogImport.ts";
import type { PrivateCluster } from "./privateCluster.ts";

/**
 * What every fault test starts from: a migrated database with a small catalog and a partner key, and
 * media batches whose items all match and whose ids name their batch.
 */

export const DATABASE = "rollcall_faults";

/** Venue 1 in New York hosts three licensed events two days apart; every batch item matches one. */
const VENUE = { latitude: 40.75, longitude: -73.99 };
const EVENTS = [
  { id: 100, startsAt: Date.parse("2025-07-05T00:00:00Z"), local: "2025-07-04T20:00:00" },
  { id: 101, startsAt: Date.parse("2025-07-07T00:00:00Z"), local: "2025-07-06T20:00:00" },
  { id: 102, startsAt: Date.parse("2025-07-09T00:00:00Z"), local: "2025-07-08T20:00:00" },
] as const;

const CATALOG = [
  venue(1, "America/New_York", { ...VENUE, city: "New York", region: "NY" }),
  performer(10),
  performer(11),
  ...EVENTS.map((e, i) =>
    event(e.id, 1, e.local, { performers: [{ id: i % 2 === 0 ? 10 : 11, is_headliner: true }] }),
  ),
];

export type FaultDatabase = { url: string; key: string };

/** Creates the test database on the private cluster, migrated, with the catalog and a sandbox key. */
export async function prepareDatabase(cluster: PrivateCluster): Promise<FaultDatabase> {
  const url = await cluster.createDatabase(DATABASE);
  const store = await openStore({ databaseUrl: url, dataDir: "", poolSize: 2 });
  try {
    succeeded(await importCatalog(store, memoryLines(CATALOG)));
    await createPartner(store, { id: "acme", name: "Acme" });
    const issued = await issueKey(store, { partnerId: "acme", environment: "sandbox", label: null });
    return { url, key: issued.key };
  } finally {
    await store.close();
  }
}

/** Adds a partner with its own read budget and returns its sandbox key. */
export async function addPartner(url: string, id: string, readLimit: number): Promise<string> {
  const store = await openStore({ databaseUrl: url, dataDir: "", poolSize: 1 });
  try {
    await createPartner(store, { id, name: id });
    await setPartnerLimits(store, id, { read: readLimit });
    return (await issueKey(store, { partnerId: id, environment: "sandbox", label: null })).key;
  } finally {
    await store.close();
  }
}

const BATCH_SIZE = 20;

export type MediaItem = {
  id: string;
  taken_at: string;
  latitude: number;
  longitude: number;
  media_type: "photo" | "video";
};

/**
 * The items of batch `batchKey` (letters, digits and dashes): item i is `${batchKey}.${i}`, so every
 * stored row names the batch it came in, and matches event 100, 101 or 102 (`expectedEventOf`).
 */
export function batchItems(batchKey: string, size = BATCH_SIZE): MediaItem[] {
  let seed = 0;
  for (const char of batchKey) seed = (seed * 31 + (char.codePointAt(0) ?? 0)) % 1_000_003;
  return Array.from({ length: size }, (_, i) => {
    const at = EVENTS[i % EVENTS.length] ?? EVENTS[0];
    // Within the first five hours of the event, spread so lists interleave batches.
    const offsetMs = ((seed * 7_919 + i * 104_729) % 18_000_000) + i;
    return {
      id: `${batchKey}.${i}`,
      taken_at: new Date(at.startsAt + offsetMs).toISOString(),
      ...VENUE,
      media_type: i % 4 === 3 ? "video" : "photo",
    };
  });
}

export function expectedEventOf(mediaId: string): number {
  const index = Number(mediaId.slice(mediaId.lastIndexOf(".") + 1));
  return EVENTS[index % EVENTS.length]?.id ?? 0;
}

export const batchKeyOf = (mediaId: string) => mediaId.slice(0, mediaId.lastIndexOf("."));
