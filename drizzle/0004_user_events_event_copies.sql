-- user_events carries copies of the event facts that decide visibility, order and the stats' tallies,
-- so history pages and stats need no key lookup into events per attended event. Existing rows are
-- filled from events before the columns become NOT NULL, the start instant too (imports before this
-- one did not move it when an event moved); the history index now also requires the licence, so its
-- predicate is the whole visibility rule.
DROP INDEX "user_events_history_idx";--> statement-breakpoint
ALTER TABLE "user_events" ADD COLUMN "starts_at_local" text;--> statement-breakpoint
ALTER TABLE "user_events" ADD COLUMN "venue_id" integer;--> statement-breakpoint
ALTER TABLE "user_events" ADD COLUMN "licensed" boolean;--> statement-breakpoint
UPDATE "user_events" ue SET "starts_at" = e."starts_at", "starts_at_local" = e."starts_at_local",
  "venue_id" = e."venue_id", "licensed" = e."licensed"
  FROM "events" e WHERE e."id" = ue."event_id";--> statement-breakpoint
ALTER TABLE "user_events" ALTER COLUMN "starts_at_local" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "user_events" ALTER COLUMN "venue_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "user_events" ALTER COLUMN "licensed" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "user_events_history_idx" ON "user_events" USING btree ("user_id","starts_at" DESC NULLS LAST,"event_id" DESC NULLS LAST) WHERE "user_events"."media_count" > 0 and not "user_events"."hidden" and "user_events"."licensed";
