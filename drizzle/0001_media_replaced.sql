-- The media rows a batch replaces, for the batch statement of src/store/ingest.ts: the user's current
-- row, if any, for each accepted media id, with its row id so the statement can delete it without a
-- second lookup.
--
-- Why a function: the batch statement runs on a cached generic plan, and a generic plan of this lookup
-- built while `media` is nearly empty (a new deployment) scans instead of probing the primary key, and
-- keeps scanning until the next ANALYZE while the table grows. Planning the whole statement on every
-- execution instead (plan_cache_mode = force_custom_plan) also replans the foreign-key checks it fires,
-- two per stored row. The setting below applies only inside this function, so only this small query is
-- planned per call, with the batch's actual user and the table's current size.
--
-- One primary-key probe per id: written as a plain join (or `= ANY`), the planner judges by the user's
-- estimated row count, which for a user not in the statistics is the average user's, and may read all of
-- a large library instead. The LIMIT 1 (harmless on a primary key) keeps the probe from being flattened
-- into such a join, so a batch costs the same for a user with 50 items as for one with 50,000.
--
-- STABLE: the query reads the snapshot of the statement that calls it, like the statement's own reads.
CREATE FUNCTION media_replaced(batch_user uuid, batch_ids text[])
RETURNS TABLE (row_id tid, replaced_media_id text, replaced_event_id integer, replaced_media_type text)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
  RETURN QUERY
    SELECT m.ctid, m.media_id, m.event_id, m.media_type
    FROM unnest(batch_ids) AS a(media_id)
    CROSS JOIN LATERAL (
      SELECT p.ctid, p.media_id, p.event_id, p.media_type
      FROM media AS p
      WHERE p.user_id = batch_user AND p.media_id = a.media_id
      LIMIT 1
    ) AS m;
END
$$;
