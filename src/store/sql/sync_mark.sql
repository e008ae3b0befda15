-- A batch's sync mark: advances the user's high-water mark and revision (what standby reads compare,
-- src/store/standbyReads.ts) and takes the user's row lock, which serializes this user's batches until the
-- transaction ends; greatest() keeps the mark from moving backwards when a
-- batch that started earlier commits later. Returns the mark in epoch milliseconds, or null when the
-- partner has no such user. plpgsql, not sql, so that its UPDATE's plan is cached per connection
-- instead of made on every call.
CREATE OR REPLACE FUNCTION advance_sync_mark(batch_user uuid, batch_partner text, accepted_any boolean)
RETURNS double precision
LANGUAGE plpgsql
AS $$
DECLARE
  mark double precision;
BEGIN
  UPDATE users
     SET last_sync_at = greatest(last_sync_at, now()),
         received_since_sync = received_since_sync OR accepted_any,
         revision = revision + 1
   WHERE id = batch_user AND partner_id = batch_partner
  RETURNING floor(extract(epoch FROM last_sync_at) * 1000)::double precision INTO mark;
  RETURN mark;
END
$$;
--> statement-breakpoint
-- The first statement of a whole batch's transaction (src/store/ingest.ts writeBatch): the sync mark
-- above, and the batch's user lookup (contract §2 step 8). The whole transaction goes to PostgreSQL in
-- one write, so a user that is not this partner's must stop the statements already sent after it:
-- raising aborts the transaction, the later statements fail unrun and the COMMIT rolls back; the caller
-- reads SQLSTATE P0002 (no_data_found) as "no such user". Another partner's user is not told apart.
CREATE OR REPLACE FUNCTION open_user_batch(batch_user uuid, batch_partner text, accepted_any boolean)
RETURNS double precision
LANGUAGE plpgsql
AS $$
DECLARE
  mark double precision;
BEGIN
  mark := advance_sync_mark(batch_user, batch_partner, accepted_any);
  IF mark IS NULL THEN
    RAISE EXCEPTION 'no such user for this partner' USING ERRCODE = 'no_data_found';
  END IF;
  RETURN mark;
END
$$;
--> statement-breakpoint
-- The names these two had before (migrations 0002, 0011), gone so that no caller finds the old bodies.
DROP FUNCTION IF EXISTS mark_batch_sync(uuid, text, boolean);
--> statement-breakpoint
DROP FUNCTION IF EXISTS batch_sync_mark(uuid, text, boolean);
