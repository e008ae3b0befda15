-- Catalog feeds and corrections (contract §15): an event's status and whether its time is known, the time of
-- the last import, and the queue of events whose kept items a running server places again after a correction.
CREATE TABLE "catalog_corrections" (
	"event_id" integer PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"leased_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "catalog_state" ADD COLUMN "imported_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "status" text DEFAULT 'scheduled' NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "time_unknown" boolean DEFAULT false NOT NULL;