-- The second index of media leads with the event, so the primary key is the only index that a lookup
-- by (user, media id) can descend (media_replaced, 0001). With the user first in both, a user the
-- statistics do not list (every user created since the last ANALYZE) is expected to own about one row,
-- the planner may take the smaller index, and each id of a batch then reads all of that user's media.
-- Lookups by (user, event) still find both columns leading (test/store-plans.test.ts).
DROP INDEX "media_user_event_idx";--> statement-breakpoint
CREATE INDEX "media_event_user_idx" ON "media" USING btree ("event_id","user_id","taken_at");