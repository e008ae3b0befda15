CREATE TABLE "user_venue_spots" (
	"user_id" uuid NOT NULL,
	"venue_id" integer NOT NULL,
	"spot_row" smallint NOT NULL,
	"spot_col" smallint NOT NULL,
	"event_id" integer NOT NULL,
	"items" integer NOT NULL,
	CONSTRAINT "user_venue_spots_user_id_venue_id_spot_row_spot_col_event_id_pk" PRIMARY KEY("user_id","venue_id","spot_row","spot_col","event_id")
);
--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "spot_row" smallint;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "spot_col" smallint;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "weight" double precision;--> statement-breakpoint
ALTER TABLE "user_events" ADD COLUMN "confidence" smallint;