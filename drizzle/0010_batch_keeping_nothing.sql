-- The whole write of a media batch that keeps nothing (src/store/ingest.ts writeBatch), as one statement
-- sent on its own, which takes the batch lock (ATTENDANCE_COPIES_LOCK, src/store/db.ts) in its FROM
-- before this runs: the sync mark and user lookup (drizzle/0002), then the check that none of the ids
-- is stored (drizzle/0008). Without BEGIN and COMMIT around it, it is one message each way and one
-- transaction: an exception (no such user, P0002; stored items, RB001) rolls the sync mark back with it.
-- Each statement of the function takes a fresh snapshot, so the lookup runs after the user's row lock
-- is held, as it did as a statement of its own.
CREATE FUNCTION batch_keeping_nothing(batch_user uuid, batch_partner text, batch_ids text[])
RETURNS double precision
LANGUAGE plpgsql
AS $$
DECLARE
  mark double precision;
BEGIN
  mark := mark_batch_sync(batch_user, batch_partner, true);
  PERFORM batch_replaces_nothing(batch_user, batch_ids);
  RETURN mark;
END
$$;
