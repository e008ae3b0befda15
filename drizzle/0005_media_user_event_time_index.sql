-- The history's index of media leads with the user again, now with the media id last. A page looks up
-- the user's media at each of its events; led by the event, those lookups land on a different leaf page
-- of the index per event, scattered over the whole table, which at 10M kept items is mostly outside
-- shared buffers. Led by the user, a page's lookups share a few leaf pages.
--
-- With two indexes led by the user, 0003's hazard returns in both directions: for a user the statistics
-- do not list (every user created since the last ANALYZE) the planner expects about one row whichever
-- index it takes, so it may read all of the user's media for each id of a batch (through this index)
-- or for each event of a page (through the primary key). So media.user_id keeps no statistics: an
-- equality on it is then priced at PostgreSQL's fixed default share of the table, never one row, and
-- each lookup takes the index that also serves its second column, the media id or the event, whose
-- statistics make it selective. test/store-plans.test.ts reads both plans for such a user.
--
-- Building the index reads all of media once: about 20 s for 10M rows on two cores, at the upgrade's boot.
DROP INDEX "media_event_user_idx";--> statement-breakpoint
CREATE INDEX "media_user_event_time_idx" ON "media" USING btree ("user_id","event_id","taken_at","media_id");--> statement-breakpoint
ALTER TABLE "media" ALTER COLUMN "user_id" SET STATISTICS 0;
