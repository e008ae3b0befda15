-- What a read on a hot standby checks (src/store/standbyReads.ts). On the primary (not in recovery) the
-- lag is 0 and it streams: a standby promoted while named in DATABASE_READ_URL answers as a primary does.
--
-- The replay lag: 0 while everything received is replayed, else how long ago the last transaction it
-- replayed committed on the primary. Null while it has replayed nothing since it started, which the
-- callers take for too far behind.
CREATE OR REPLACE FUNCTION standby_lag_seconds()
RETURNS double precision
LANGUAGE sql STABLE
AS $$
  SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::double precision
  END
$$;
--> statement-breakpoint
-- Whether a WAL receiver runs: a standby cut off from its primary has nothing left to replay, so its lag
-- reads 0 however stale it is. The view shows the receiver's row to every role (its details only to
-- pg_read_all_stats), which is all this asks.
CREATE OR REPLACE FUNCTION standby_streams()
RETURNS boolean
LANGUAGE sql STABLE
AS $$
  SELECT NOT pg_is_in_recovery() OR EXISTS (SELECT 1 FROM pg_stat_wal_receiver)
$$;
--> statement-breakpoint
-- The fence of a read: this server holds the user's row at `fence` (the revision the primary gave just
-- before), so the user's last acknowledged write is replayed, and it streams within the lag bound.
CREATE OR REPLACE FUNCTION standby_serves(revision bigint, fence bigint, max_lag_seconds double precision)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
  SELECT revision >= fence AND standby_streams() AND coalesce(standby_lag_seconds() <= max_lag_seconds, false)
$$;
