-- The rows a batch replaces (the ids it sends that the user keeps), found the cheaper of two ways for this user and batch
-- (docs/architecture.md §6):
--
-- * A user who keeps few items for the batch's size (up to eight per id sent, counted from the user's
--   history rows, at most 64 of them) has them all read by the user's own index range and matched to
--   the batch's ids in a hash: about 0.15 µs an item read, where a primary-key probe costs about 1.4 µs
--   an id. Most batches are of this kind: a camera roll keeps a few hundred items and sends them 200 at
--   a time (docs/performance.md §12).
-- * Anyone else gets one primary-key probe per id, as before, so a batch costs the same for a user with
--   5,000 items as for one with 500,000.
--
-- The range meets the ids in a semi-join, which dedupes repeated ids. Each setting below holds a plan
-- test/store-plans.test.ts reads.
CREATE OR REPLACE FUNCTION media_replaced(batch_user uuid, batch_ids text[])
RETURNS TABLE (row_id tid, replaced_media_id text, replaced_event_id integer, replaced_media_type text)
LANGUAGE plpgsql STABLE
-- One plan per connection: left to choose, batches of a few ids would have the probe planned on every call.
SET plan_cache_mode = force_generic_plan
-- A plan made while media was empty would go on scanning it as it grows.
SET enable_seqscan = off
-- A range that looked a row long would otherwise be met with the ids by comparing every item with every id.
SET enable_nestloop = off
-- The probe, a lateral join, has no plan but the nested loop, whose inflated cost must not make it compile.
SET jit = off
AS $$
DECLARE
  history_rows integer;
  kept_items bigint;
BEGIN
  SELECT count(*), coalesce(sum(h.media_count), 0) INTO history_rows, kept_items
  FROM (SELECT media_count FROM user_events WHERE user_id = batch_user LIMIT 64) AS h;
  IF history_rows < 64 AND kept_items <= 8 * cardinality(batch_ids) THEN
    RETURN QUERY
      SELECT m.ctid, m.media_id, m.event_id, m.media_type
      FROM (
        SELECT p.ctid, p.media_id, p.event_id, p.media_type
        FROM media AS p
        WHERE p.user_id = batch_user
        OFFSET 0
      ) AS m
      WHERE m.media_id IN (SELECT unnest(batch_ids));
  ELSE
    RETURN QUERY
      SELECT m.ctid, m.media_id, m.event_id, m.media_type
      FROM unnest(batch_ids) AS a(media_id)
      CROSS JOIN LATERAL (
        SELECT p.ctid, p.media_id, p.event_id, p.media_type
        FROM media AS p
        WHERE p.user_id = batch_user AND p.media_id = a.media_id
        LIMIT 1
      ) AS m;
  END IF;
END
$$;
