CREATE TABLE "user_event_media" (
	"user_id" uuid NOT NULL,
	"event_id" integer NOT NULL,
	"media_json" text NOT NULL,
	CONSTRAINT "user_event_media_user_id_event_id_pk" PRIMARY KEY("user_id","event_id")
);
--> statement-breakpoint
ALTER TABLE "user_event_media" ADD CONSTRAINT "user_event_media_history_row_fk" FOREIGN KEY ("user_id","event_id") REFERENCES "public"."user_events"("user_id","event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Lists for the media an existing database already keeps, the same text a batch writes (mediaListJson in
-- src/store/eventDetails.ts). A history row without media has no list and reads as an empty one. One
-- pass over media, sorted by user and event: about a minute for 10M kept items, at the upgrade's boot.
INSERT INTO "user_event_media" ("user_id", "event_id", "media_json")
SELECT "user_id", "event_id", '[' || string_agg(
         '{"media_id":' || to_json("media_id")::text
         || ',"taken_at":"' || to_char("taken_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         || '","media_type":"' || "media_type" || '"'
         || coalesce(',"thumbnail_url":' || to_json("thumbnail_url")::text, '')
         || '}',
         ',' ORDER BY "taken_at", "media_id" COLLATE "C") || ']' AS "media_json"
FROM "media"
GROUP BY "user_id", "event_id";
