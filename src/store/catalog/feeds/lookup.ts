import { sql } from "drizzle-orm";
import type { Store } from "../../db.ts";
import type { EventStatus } from "../eventStatus.ts";

/**
 * `catalog lookup` (docs/operations.md §3): events by a feed's external id, by part of their name or
 * their venue's name, and by local date, with the external ids each is known by. Every criterion given
 * must hold; names match case-insensitively anywhere in the name.
 */

export type LookupQuery = {
  externalId: string | null;
  source: string | null;
  name: string | null;
  venue: string | null;
  /** `YYYY-MM-DD` at the venue. */
  date: string | null;
};

export type FoundEvent = {
  id: number;
  name: string;
  venue: string;
  starts_at_local: string;
  status: EventStatus;
  time_unknown: boolean;
  /** `source:external id`, one for each feed that names the event. */
  external_ids: string[];
};

export const LOOKUP_LIMIT = 100;

export async function lookupEvents(store: Store, q: LookupQuery): Promise<FoundEvent[]> {
  return store.rows<FoundEvent>(sql`
    select e.id, e.name, v.name as venue, e.starts_at_local, e.status, e.time_unknown,
      array(select x.source || ':' || x.external_id from external_ids x
            where x.kind = 'event' and x.id = e.id order by 1) as external_ids
    from events e join venues v on v.id = e.venue_id
    where (${q.externalId}::text is null or e.id in (
            select id from external_ids
            where kind = 'event' and external_id = ${q.externalId} and (${q.source}::text is null or source = ${q.source})))
      and (${q.name}::text is null or strpos(lower(e.name), lower(${q.name})) > 0)
      and (${q.venue}::text is null or strpos(lower(v.name), lower(${q.venue})) > 0)
      and (${q.date}::text is null or left(e.starts_at_local, 10) = ${q.date})
    order by e.starts_at_local, e.id
    limit ${LOOKUP_LIMIT}`);
}
