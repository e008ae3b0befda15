import { type SQL, sql } from "drizzle-orm";
import { CONFIDENCE } from "../confidence/confidence.ts";

/*
 * Match confidence (docs/api.md §15) as the batch statement keeps it, the parts of `batchStatement`
 * (src/store/ingest.ts) that maintain `user_venue_spots` and recompute `user_events.confidence`. Item
 * weights and spot cells come with the kept items (worked out by src/confidence at match time); what
 * needs the user's other items, the routine spots and the event's span, is done here, in the statement
 * that writes the items, so a batch stays one round trip.
 *
 * Every part of a statement reads the snapshot from before it, so the state after the batch is built
 * the way the rendered media lists are: what the snapshot holds, minus the rows the batch replaces
 * (`previous`, `prior`), plus the batch's items (`incoming`). The parameters are written as literals:
 * the statement text stays fixed, and they are constants of the code, not of a request.
 */

const p = CONFIDENCE;
const literal = (n: number) => sql.raw(String(n));

/** A cell's 3 × 3 neighbourhood as offsets. */
const NEIGHBOURS = sql.raw(
  "(values (-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0), (1, 1)) as d(r, c)",
);

/**
 * The CTEs after `previous` and `touched`: the spot rows the batch changes (`spot_change`, written to
 * `user_venue_spots` by `spots_written`), the cells whose routine status the change flips, the events to
 * recompute (`recompute`: the touched events and every event with items in a flipped cell) and, for
 * each, its items after the batch (`event_items`, which the stored media lists are rendered from too:
 * one read of the event's media for both), the sum of their weights (routine items at routineWeight)
 * and the non-routine items' first and last capture (`scores`). Rows whose count fell to zero stay in `user_venue_spots`; every read
 * below adds the counts up and keeps what is above zero.
 *
 * A routine status can only change within one cell of a cell whose events changed (`watched`), and
 * only at a venue where the user's items fall on routineEvents events or more (`busy_venues`): most
 * users' venues have fewer, and their batches skip the neighbourhood counts. The
 * spots are read per venue, with one range lookup of the primary key each, and every neighbourhood is
 * counted by joining each spot row to its nine surrounding cells on equality, which hashes, rather
 * than matching ranges row against row. An event's items are read per event through an `offset 0`
 * subquery, which keeps the (user, event) index: flattened into a join, the planner reads all of the
 * user's media by the primary key instead.
 */
export function confidenceCtes(userId: string): SQL {
  const user = sql`${userId}::uuid`;
  return sql`
    prior as (
      select m.venue_id, m.spot_row::int as spot_row, m.spot_col::int as spot_col, m.event_id from media m
      where m.ctid = any(array(
        select row_id from previous
        where media_id in (select media_id from upserted) or media_id not in (select media_id from incoming)
      )) and m.spot_row is not null
    ),
    spot_change as (
      select venue_id, spot_row, spot_col, event_id, sum(n)::int as n from (
        select venue_id, spot_row, spot_col, event_id, 1 as n from incoming
        where spot_row is not null and media_id in (select media_id from upserted)
        union all
        select venue_id, spot_row, spot_col, event_id, -1 from prior
      ) c
      group by venue_id, spot_row, spot_col, event_id
      having sum(n) <> 0
    ),
    spots_written as (
      insert into user_venue_spots (user_id, venue_id, spot_row, spot_col, event_id, items)
      select ${user}, venue_id, spot_row, spot_col, event_id, n from spot_change
      on conflict (user_id, venue_id, spot_row, spot_col, event_id)
      do update set items = user_venue_spots.items + excluded.items
    ),
    spots_around as (
      select venue_id, spot_row, spot_col, event_id, sum(before_n) as before_n, sum(before_n + n) as after_n
      from (
        select s.venue_id, s.spot_row::int as spot_row, s.spot_col::int as spot_col, s.event_id,
               s.items as before_n, 0 as n
        from user_venue_spots s
        where s.user_id = ${user} and s.venue_id = any(array(select distinct venue_id from spot_change))
        union all
        select venue_id, spot_row, spot_col, event_id, 0, n from spot_change
      ) x
      group by venue_id, spot_row, spot_col, event_id
    ),
    busy_venues as (
      select venue_id from spots_around group by venue_id
      having count(distinct event_id) filter (where before_n > 0) >= ${literal(p.routineEvents)}
          or count(distinct event_id) filter (where after_n > 0) >= ${literal(p.routineEvents)}
    ),
    watched as (
      select distinct c.venue_id, c.spot_row + d.r as spot_row, c.spot_col + d.c as spot_col
      from spot_change c cross join ${NEIGHBOURS}
    ),
    flipped as (
      select venue_id, spot_row, spot_col from (
        select s.venue_id, s.spot_row + d.r as spot_row, s.spot_col + d.c as spot_col, s.event_id,
               bool_or(s.before_n > 0) as had, bool_or(s.after_n > 0) as has
        from spots_around s cross join ${NEIGHBOURS}
        where s.venue_id in (select venue_id from busy_venues)
          and (s.venue_id, s.spot_row + d.r, s.spot_col + d.c) in (select venue_id, spot_row, spot_col from watched)
        group by 1, 2, 3, 4
      ) e
      group by 1, 2, 3
      having (count(*) filter (where had) >= ${literal(p.routineEvents)})
        <> (count(*) filter (where has) >= ${literal(p.routineEvents)})
    ),
    recompute as (
      select event_id from touched
      union
      select s.event_id from spots_around s join flipped f
        on f.venue_id = s.venue_id and f.spot_row = s.spot_row and f.spot_col = s.spot_col
      where s.after_n > 0
    ),
    event_items as (
      select m.event_id, m.media_id, m.taken_at, m.media_type, m.thumbnail_url, m.venue_id,
             m.spot_row::int as spot_row, m.spot_col::int as spot_col, m.weight
      from recompute r
      cross join lateral (
        select * from media m where m.user_id = ${user} and m.event_id = r.event_id offset 0
      ) m
      where m.media_id not in (select media_id from previous)
      union all
      select event_id, media_id, taken_at::timestamptz, media_type, thumbnail_url, venue_id, spot_row, spot_col,
             weight
      from incoming
      where event_id in (select event_id from recompute)
    ),
    item_spots as (
      select venue_id, spot_row, spot_col, event_id from (
        select s.venue_id, s.spot_row::int as spot_row, s.spot_col::int as spot_col, s.event_id, s.items as n
        from user_venue_spots s
        where s.user_id = ${user}
          and s.venue_id = any(array(select distinct venue_id from event_items where spot_row is not null))
        union all
        select venue_id, spot_row, spot_col, event_id, n from spot_change
      ) x
      group by venue_id, spot_row, spot_col, event_id
      having sum(n) > 0
    ),
    routine_cells as (
      select venue_id, spot_row, spot_col from (
        select distinct s.venue_id, s.spot_row + d.r as spot_row, s.spot_col + d.c as spot_col, s.event_id
        from item_spots s cross join ${NEIGHBOURS}
        where s.venue_id in (
            select venue_id from item_spots group by venue_id
            having count(distinct event_id) >= ${literal(p.routineEvents)})
          and (s.venue_id, s.spot_row + d.r, s.spot_col + d.c) in (
          select venue_id, spot_row, spot_col from event_items where spot_row is not null)
      ) e
      group by 1, 2, 3
      having count(*) >= ${literal(p.routineEvents)}
    ),
    scores as (
      select i.event_id,
             sum(i.weight * case when rc.venue_id is null then 1 else ${literal(p.routineWeight)} end) as weights,
             min(i.taken_at) filter (where rc.venue_id is null) as first_at,
             max(i.taken_at) filter (where rc.venue_id is null) as last_at
      from event_items i
      left join routine_cells rc
        on rc.venue_id = i.venue_id and rc.spot_row = i.spot_row and rc.spot_col = i.spot_col
      group by i.event_id
    )`;
}

/**
 * An event's confidence in hundredths from its items' summed weights and its non-routine items' first
 * and last capture (any of them null for none) and the event's start and end (`endsAt` null: the
 * default duration): `eventConfidence` of src/confidence. `floor(x + 0.5)` rounds halves up as
 * Math.round does; PostgreSQL's round() of a double may round them to even.
 */
export function confidenceValue(
  parts: { weights: SQL; firstAt: SQL; lastAt: SQL; startsAt: SQL; endsAt: SQL },
  defaultDurationMinutes: number,
): SQL {
  const { weights, firstAt, lastAt, startsAt, endsAt } = parts;
  const duration = sql`extract(epoch from coalesce(${endsAt},
    ${startsAt} + make_interval(mins => ${defaultDurationMinutes}::int)) - ${startsAt})::float8`;
  const span = sql`(case when ${lastAt} > ${firstAt} and ${duration} > 0
    then least(1, extract(epoch from ${lastAt} - ${firstAt})::float8 / ${duration}) else 0 end)`;
  // exp() of a large negative number is an underflow error in PostgreSQL, not 0; past 50 of evidence
  // the confidence is 1.00 anyway.
  return sql`floor(100 * (1 - exp(-least(50, ${literal(p.itemEvidence)} * coalesce(${weights}, 0)
    + ${literal(p.spanEvidence)} * ${span}))) + 0.5)::smallint`;
}
