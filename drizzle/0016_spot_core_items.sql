ALTER TABLE "media" ADD COLUMN "in_core" boolean;--> statement-breakpoint
ALTER TABLE "user_venue_spots" ADD COLUMN "core_items" integer DEFAULT 0 NOT NULL;