-- The whole write of a media batch that keeps nothing, in the common case (src/store/ingest.ts
-- writeBatch): most batches of a camera roll match no event, and their ids were never kept, so once
-- the sync mark is set there is nothing to store, remove or recount. This looks the ids up and raises
-- SQLSTATE RB001 when any of them is stored: the transaction then rolls back, sync mark included, and
-- the caller sends the batch again with the full batch statement, which removes those items and
-- recounts their events. The batch statement's plan is about sixty nodes more than this lookup, and
-- PostgreSQL starts every one of them on every execution, empty or not (docs/performance.md §12).
--
-- One primary-key probe per id, kept from being flattened into a join by the LIMIT 1, as in
-- media_replaced (drizzle/0001). Unlike there, the probe's plan is the cached generic one: with
-- sequential scans priced out it can only descend the primary key, and planning it on every call would
-- cost about as much as the probes.
CREATE FUNCTION batch_replaces_nothing(batch_user uuid, batch_ids text[])
RETURNS void
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
  PERFORM 1
    FROM unnest(batch_ids) AS a(media_id)
    CROSS JOIN LATERAL (
      SELECT 1 FROM media AS p WHERE p.user_id = batch_user AND p.media_id = a.media_id LIMIT 1
    ) AS stored
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'the batch replaces stored items' USING ERRCODE = 'RB001';
  END IF;
END
$$;
