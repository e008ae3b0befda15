import { type SQL, sql } from "drizzle-orm";
import { CONFIDENCE } from "../confidence/confidence.ts";

/*
 * Match confidence of a user's events (docs/api.md §15), defined once, here, in SQL: the batch statement
 * (src/store/ingest.ts) keeps it up to date for the events a batch changes, and the backfill
 * (src/store/confidenceBackfill.ts) computes it for every event of a user; both score with
 * `confidenceScores` and `confidenceValue`. What an item weighs, which spot cell it falls on and whether
 * it lies in the venue's core is the item's own rule (src/confidence), worked out when it is matched and
 * kept with it; what needs the user's other items, the routine spots and the event's span, is done here,
 * beside the rows, so a batch stays one round trip. test/store-confidence.test.ts and
 * test/store-routine-spots.test.ts hold both to an independent model.
 *
 * The parameters are written as literals: the statement text stays fixed, and they are constants of the
 * code, not of a request.
 */

const p = CONFIDENCE;
const literal = (n: number) => sql.raw(String(n));

/**
 * Whether a media row (or a row with its `in_core` and `spot_row`) lies in the venue's core. A row kept
 * before `in_core` was stored has it null, and then only an item in the core had no spot cell.
 */
export const inCore = (row: SQL) => sql`coalesce(${row}.in_core, ${row}.spot_row is null)`;

/** A cell's 3 × 3 neighbourhood as offsets, named `alias`(r, c). */
const neighbours = (alias: string) =>
  sql.raw(
    `(values (-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0), (1, 1)) as ${alias}(r, c)`,
  );

/** 1 for an item in the core, 0 for one outside it, from its core flag. */
const coreCount = (flag: SQL) => sql`(case when ${flag} then 1 else 0 end)`;

/**
 * Whether a neighbourhood is routine, as an aggregate over its spot rows `s` with their counts of items
 * and of items in the core: the items fall on routineEvents events or more, and strictly more than half
 * of them lie outside the core.
 */
const routineNeighbourhood = (items: SQL, coreItems: SQL) =>
  sql`(count(distinct s.event_id) filter (where ${items} > 0) >= ${literal(p.routineEvents)}
        and 2 * sum(${coreItems}) < sum(${items}))`;

/**
 * Whether a venue is busy, as an aggregate over its spot rows with their counts of items and of items in
 * the core: the items fall on routineEvents events or more, and one of them lies outside the core. Only
 * at a busy venue can a neighbourhood be routine (`routineNeighbourhood`), so only there is one counted.
 */
const busyVenue = (items: SQL, coreItems: SQL) =>
  sql`(count(distinct event_id) filter (where ${items} > 0) >= ${literal(p.routineEvents)}
        and bool_or(${items} > ${coreItems}))`;

/**
 * The batch statement's part (after its `previous` and `touched`), which scores only what the batch
 * changes. Every part of a statement reads the snapshot from before it, so the state after the batch is
 * built the way the rendered media lists are: what the snapshot holds, minus the rows the batch replaces
 * (`previous`, `prior`), plus the batch's items (`incoming`). The CTEs: the spot rows the batch changes,
 * their items and their items in the core (`spot_change`, written to `user_venue_spots` by
 * `spots_written`), the user's spot rows before and after the batch at every venue the batch touches
 * (`spots`, one read), the cells whose routine status the change flips (`flipped`), the events to
 * recompute (`recompute`: the touched events and every event with items in a flipped cell) and each one's
 * items after the batch (`event_items`, which the stored media lists are rendered from too), then
 * `confidenceScores`. Rows whose count fell to zero stay in `user_venue_spots`; every read adds the
 * counts up and keeps what is above zero.
 *
 * Every touched event is at a venue of an upserted item or of a replaced row (`prior` keeps the venue of
 * every replaced row for that), and every flipped cell is at a venue of a spot change, so `spots` holds
 * all the spot rows the routine checks read. `busy_venues` counts events before or after the batch, as
 * `flipped` needs both. A cell's status changes only when its neighbourhood's events or its balance of
 * items in and outside the core change, so `flipped` looks only around the spot rows the batch changes
 * (re-sending items unchanged looks at nothing) and compares the whole status before and after; the
 * neighbourhoods are listed first (`watched`) for the reason `item_cells` is.
 */
export function confidenceCtes(userId: SQL): SQL {
  const user = sql`${userId}::uuid`;
  return sql`
    prior as (
      select m.venue_id, m.spot_row::int as spot_row, m.spot_col::int as spot_col, m.event_id,
             ${inCore(sql`m`)} as in_core
      from media m
      where m.ctid = any(array(select row_id from replaced))
    ),
    spot_change as (
      select venue_id, spot_row, spot_col, event_id, sum(n)::int as n, sum(core_n)::int as core_n from (
        select venue_id, spot_row, spot_col, event_id, 1 as n, ${coreCount(sql`in_core`)} as core_n
        from upserted where spot_row is not null
        union all
        select venue_id, spot_row, spot_col, event_id, -1, -${coreCount(sql`in_core`)}
        from prior where spot_row is not null
      ) c
      group by venue_id, spot_row, spot_col, event_id
      having sum(n) <> 0 or sum(core_n) <> 0
    ),
    spots_written as (
      insert into user_venue_spots (user_id, venue_id, spot_row, spot_col, event_id, items, core_items)
      select ${user}, venue_id, spot_row, spot_col, event_id, n, core_n from spot_change
      on conflict (user_id, venue_id, spot_row, spot_col, event_id)
      do update set items = user_venue_spots.items + excluded.items,
                    core_items = user_venue_spots.core_items + excluded.core_items
    ),
    spots as (
      select venue_id, spot_row, spot_col, event_id, sum(before_n) as before_n, sum(before_n + n) as after_n,
             sum(before_core) as before_core, sum(before_core + core_n) as after_core
      from (
        select s.venue_id, s.spot_row::int as spot_row, s.spot_col::int as spot_col, s.event_id,
               s.items as before_n, 0 as n, s.core_items as before_core, 0 as core_n
        from user_venue_spots s
        where s.user_id = ${user} and s.venue_id = any(array(
          select venue_id from upserted
          union
          select venue_id from prior
        ))
        union all
        select venue_id, spot_row, spot_col, event_id, 0, n, 0, core_n from spot_change
      ) x
      group by venue_id, spot_row, spot_col, event_id
    ),
    busy_venues as (
      select venue_id from spots group by venue_id
      having ${busyVenue(sql`before_n`, sql`before_core`)} or ${busyVenue(sql`after_n`, sql`after_core`)}
    ),
    watched as materialized (
      select distinct c.venue_id, c.spot_row + d.r as spot_row, c.spot_col + d.c as spot_col,
             c.spot_row + d.r + e.r as near_row, c.spot_col + d.c + e.c as near_col
      from spots c cross join ${neighbours("d")} cross join ${neighbours("e")}
      where exists (select from busy_venues)
        and (c.before_n <> c.after_n or c.before_core <> c.after_core)
        and c.venue_id in (select venue_id from busy_venues)
    ),
    flipped as (
      select w.venue_id, w.spot_row, w.spot_col
      from watched w
      join spots s on s.venue_id = w.venue_id and s.spot_row = w.near_row and s.spot_col = w.near_col
      group by 1, 2, 3
      having ${routineNeighbourhood(sql`s.before_n`, sql`s.before_core`)}
        <> ${routineNeighbourhood(sql`s.after_n`, sql`s.after_core`)}
    ),
    recompute as (
      select event_id from touched
      union
      select s.event_id from spots s join flipped f
        on f.venue_id = s.venue_id and f.spot_row = s.spot_row and f.spot_col = s.spot_col
      where s.after_n > 0
    ),
    event_items as (
      select m.event_id, m.media_id, m.taken_at, m.media_type, m.thumbnail_url, m.venue_id,
             m.spot_row::int as spot_row, m.spot_col::int as spot_col, m.in_core, m.weight
      from recompute r
      -- offset 0: one (user, event) index probe per event, where a join reads all the user's media by its key
      cross join lateral (
        select * from media m where m.user_id = ${user} and m.event_id = r.event_id offset 0
      ) m
      where m.media_id not in (select media_id from previous)
      union all
      select event_id, media_id, taken_at::timestamptz, media_type, thumbnail_url, venue_id, spot_row, spot_col,
             in_core, weight
      from incoming
      where event_id in (select event_id from recompute)
    ),
    ${confidenceScores()}`;
}

/**
 * The rule's part over the rows: from `event_items` (each event's items to score: event, time, venue,
 * spot cell, whether in the core, weight), `spots` (the user's spot rows after the change, `after_n`
 * items, `after_core` of them in the core) and `busy_venues` (at least the venues that are busy,
 * `busyVenue`), the routine cells of the items' neighbourhoods (`routine_cells`) and each event's summed
 * weights, its best weight outside the core and its non-routine items' first and last capture (`scores`).
 * A routine item counts outside the core at routineWeight wherever its fix fell; the others count where
 * they lie. Neighbourhoods are counted only at busy venues: a cell is routine only when its neighbourhood
 * has that many events and most of its items lie outside the core, and most users' venues have fewer
 * events or (a season ticket's) nothing outside the core; without a busy venue (`exists`, a one-time
 * filter) the neighbourhood parts never run. Each neighbourhood is listed first (`item_cells`, materialized) and
 * joined to the spot rows on all three columns, which hashes; with the offsets computed inside the join,
 * the generic plan's estimates make the planner join on the venue alone and compare every pair
 * (docs/performance.md §11). An item with no cell (kept in the core before in-core items had cells) is
 * never routine.
 */
export function confidenceScores(): SQL {
  const routine = sql`rc.venue_id is not null`;
  // An item counted outside the core, and what it counts: a routine one at routineWeight of its weight.
  const countedOutside = sql`not ${inCore(sql`i`)} or ${routine}`;
  const outsideWeight = sql`i.weight * case when ${routine} then ${literal(p.routineWeight)} else 1 end`;
  return sql`
    item_cells as materialized (
      select distinct c.venue_id, c.spot_row, c.spot_col, c.spot_row + d.r as near_row, c.spot_col + d.c as near_col
      from event_items c cross join ${neighbours("d")}
      where exists (select from busy_venues)
        and c.spot_row is not null and c.venue_id in (select venue_id from busy_venues)
    ),
    routine_cells as (
      select c.venue_id, c.spot_row, c.spot_col
      from item_cells c
      join spots s on s.venue_id = c.venue_id and s.spot_row = c.near_row and s.spot_col = c.near_col
      where s.after_n > 0
      group by 1, 2, 3
      having ${routineNeighbourhood(sql`s.after_n`, sql`s.after_core`)}
    ),
    scores as (
      select i.event_id,
             sum(i.weight) filter (where ${inCore(sql`i`)} and not ${routine}) as inside_weights,
             sum(${outsideWeight}) filter (where ${countedOutside}) as outside_weights,
             max(${outsideWeight}) filter (where ${countedOutside}) as outside_best,
             coalesce(bool_or(${inCore(sql`i`)} and not ${routine} and i.weight is not null), false)
               as any_inside,
             min(i.taken_at) filter (where not ${routine}) as first_at,
             max(i.taken_at) filter (where not ${routine}) as last_at
      from event_items i
      left join routine_cells rc
        on rc.venue_id = i.venue_id and rc.spot_row = i.spot_row and rc.spot_col = i.spot_col
      group by i.event_id
    )`;
}

/**
 * Every history row of one user scored again from the user's kept items and spot rows as stored: what
 * the batches leave, computed whole. The items are reached through the history rows, one (user, event)
 * lookup each, as a history page reaches them: media.user_id keeps no statistics (docs/architecture.md
 * §6), so led by the user the planner expects 0.5 % of the table and hashes all of events. A history row
 * with no kept item left has nothing to show for it: 0. With `eventIds`, only the user's rows at those
 * events (a catalog correction's).
 */
export function userConfidenceUpdate(
  userId: string,
  defaultDurationMinutes: number,
  eventIds: readonly number[] | null = null,
): SQL {
  const user = sql`${userId}::uuid`;
  const atEvents = eventIds === null ? sql`` : sql` and ue.event_id = any(${sql.param(eventIds)}::int[])`;
  return sql`
    with event_items as (
      select m.event_id, m.taken_at, m.venue_id, m.spot_row::int as spot_row, m.spot_col::int as spot_col,
             m.in_core, m.weight
      from user_events ue
      -- offset 0: a row estimated per history row, not one in all, so the routine cells join by hash
      cross join lateral (
        select * from media m where m.user_id = ue.user_id and m.event_id = ue.event_id offset 0
      ) m
      where ue.user_id = ${user}${atEvents}
    ),
    spots as (
      select venue_id, spot_row::int as spot_row, spot_col::int as spot_col, event_id, items as after_n,
             core_items as after_core
      from user_venue_spots where user_id = ${user} and items > 0
    ),
    busy_venues as (
      select venue_id from spots group by venue_id having ${busyVenue(sql`after_n`, sql`after_core`)}
    ),
    ${confidenceScores()}
    update user_events ue set confidence = ${confidenceValue(sql`sc`, sql`e`, sql`${defaultDurationMinutes}`)}
    from events e
    left join scores sc on sc.event_id = e.id
    where ue.user_id = ${user} and e.id = ue.event_id${atEvents}
    returning ue.event_id`;
}

/**
 * An event's confidence in hundredths from its row of `scores` (null: no items) and its event row's start,
 * end (`ends_at` null: the default duration) and `time_unknown` (the evidence counts at timeUnknownShare).
 * The items counted in the core count in full; those counted outside it and, with none in the core, the
 * span saturate below a ceiling of outsideCap times the best of their weights (a bystander's evidence):
 *   evidence = itemEvidence × inside + saturated(itemEvidence × outside [+ spanEvidence × span])
 *              [+ spanEvidence × span], saturated(x) = ceiling × (1 − e^(−x / ceiling)), 0 with no ceiling.
 * `floor(x + 0.5)` rounds halves up as Math.round does; PostgreSQL's round() of a double may round them
 * to even. exp() of a large negative number is an underflow error in PostgreSQL, not 0, hence `least`.
 */
export function confidenceValue(scores: SQL, event: SQL, defaultDurationMinutes: SQL): SQL {
  const duration = sql`extract(epoch from coalesce(${event}.ends_at,
    ${event}.starts_at + make_interval(mins => ${defaultDurationMinutes}::int)) - ${event}.starts_at)::float8`;
  const span = sql`${literal(p.spanEvidence)} * (case when ${scores}.last_at > ${scores}.first_at and ${duration} > 0
    then least(1, extract(epoch from ${scores}.last_at - ${scores}.first_at)::float8 / ${duration}) else 0 end)`;
  const anyInside = sql`coalesce(${scores}.any_inside, false)`;
  const ceiling = sql`${literal(p.outsideCap)} * coalesce(${scores}.outside_best, 0)`;
  const outside = sql`${literal(p.itemEvidence)} * coalesce(${scores}.outside_weights, 0)
    + case when ${anyInside} then 0 else ${span} end`;
  const evidence = sql`${literal(p.itemEvidence)} * coalesce(${scores}.inside_weights, 0)
    + case when ${ceiling} > 0 then ${ceiling} * (1 - exp(-least(50, (${outside}) / (${ceiling})))) else 0 end
    + case when ${anyInside} then ${span} else 0 end`;
  const share = sql`case when ${event}.time_unknown then ${literal(p.timeUnknownShare)} else 1 end`;
  return sql`floor(100 * (1 - exp(-least(50, (${evidence}) * ${share}))) + 0.5)::smallint`;
}
