-- Media batches that keep nothing, several at once (src/store/keepingNothing.ts): one statement and one
-- commit for the batches that arrived while the statement before was being written, instead of one each
-- (docs/architecture.md §3). Nothing raises, so one batch's outcome never undoes another's. For each,
-- in the order given:
--
-- 1. the user's row lock (FOR NO KEY UPDATE, the lock the sync mark's UPDATE takes, which leaves the
--    foreign-key checks of other users' media alone), skipped when another transaction holds it: a
--    group never waits for one user (a batch of the same user, an erasure), so it never holds up the
--    others' batches, and two groups never deadlock. Such a batch is `user_busy`; no row at all is
--    `no_user`;
-- 2. whether any of its ids is stored (media_replaced.sql), looked up after the lock: each statement
--    here takes a fresh snapshot, so it sees every batch of this user that committed first;
-- 3. only when none is, the sync mark (`advance_sync_mark`, sync_mark.sql): `written`. A batch with stored ids writes
--    nothing here (`replaces_stored`).
--
-- A `user_busy` or `replaces_stored` batch is sent again as a whole batch, which waits for the lock and
-- removes stored ids. First of all the group takes the batch lock, `copies_lock` (ATTENDANCE_COPIES_LOCK,
-- src/store/db.ts), shared, as every batch does before it reads an event.
--
-- `batch_ids` holds every batch's ids one after another, `id_counts` how many each batch has.
CREATE OR REPLACE FUNCTION batches_keeping_nothing(
  copies_lock bigint, batch_users uuid[], batch_partners text[], batch_ids text[], id_counts integer[]
)
RETURNS TABLE (batch_index integer, last_sync_ms double precision, outcome text)
LANGUAGE plpgsql
AS $$
DECLARE
  first_id integer := 1;
  ids text[];
BEGIN
  PERFORM pg_advisory_xact_lock_shared(copies_lock);
  FOR i IN 1 .. coalesce(cardinality(batch_users), 0) LOOP
    batch_index := i;
    last_sync_ms := NULL;
    ids := batch_ids[first_id : first_id + id_counts[i] - 1];
    first_id := first_id + id_counts[i];
    PERFORM 1 FROM users
      WHERE id = batch_users[i] AND partner_id = batch_partners[i]
      FOR NO KEY UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      outcome := CASE
        WHEN EXISTS (SELECT 1 FROM users WHERE id = batch_users[i] AND partner_id = batch_partners[i])
        THEN 'user_busy' ELSE 'no_user' END;
    ELSIF EXISTS (SELECT 1 FROM media_replaced(batch_users[i], ids)) THEN
      outcome := 'replaces_stored';
    ELSE
      last_sync_ms := advance_sync_mark(batch_users[i], batch_partners[i], true);
      outcome := 'written';
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
