CREATE TABLE "catalog_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"version" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_performers" (
	"event_id" integer NOT NULL,
	"performer_id" integer NOT NULL,
	"is_headliner" boolean,
	"position" integer NOT NULL,
	CONSTRAINT "event_performers_event_id_performer_id_pk" PRIMARY KEY("event_id","performer_id")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"venue_id" integer NOT NULL,
	"starts_at_local" text NOT NULL,
	"ends_at_local" text,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone,
	"licensed" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE TABLE "performers" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"category" text,
	"image_url" text
);
--> statement-breakpoint
CREATE TABLE "venues" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"city" text,
	"region" text,
	"country" text,
	"latitude" double precision NOT NULL,
	"longitude" double precision NOT NULL,
	"timezone" text NOT NULL,
	"radius_m" integer
);
--> statement-breakpoint
CREATE TABLE "media" (
	"user_id" uuid NOT NULL,
	"media_id" text NOT NULL,
	"event_id" integer NOT NULL,
	"venue_id" integer NOT NULL,
	"taken_at" timestamp with time zone NOT NULL,
	"latitude" double precision NOT NULL,
	"longitude" double precision NOT NULL,
	"media_type" text NOT NULL,
	"filename" text,
	"duration_seconds" double precision,
	"thumbnail_url" text,
	"device_make" text,
	"device_model" text,
	"device_lens_model" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "media_user_id_media_id_pk" PRIMARY KEY("user_id","media_id")
);
--> statement-breakpoint
CREATE TABLE "user_events" (
	"user_id" uuid NOT NULL,
	"event_id" integer NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"media_count" integer DEFAULT 0 NOT NULL,
	"photo_count" integer DEFAULT 0 NOT NULL,
	"video_count" integer DEFAULT 0 NOT NULL,
	"hidden" boolean DEFAULT false NOT NULL,
	"first_matched_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "user_events_user_id_event_id_pk" PRIMARY KEY("user_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" text NOT NULL,
	"environment" text NOT NULL,
	"label" text,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"ingest_limit" integer,
	"read_limit" integer,
	"write_limit" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "partners_id_shape" CHECK ("partners"."id" ~ '^[a-z0-9_]{1,64}$')
);
--> statement-breakpoint
CREATE TABLE "service_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" text NOT NULL,
	"email" text NOT NULL,
	"email_key" text NOT NULL,
	"partner_user_id" text,
	"first_name" text,
	"last_name" text,
	"phone_number" text,
	"address" jsonb,
	"has_synced" boolean DEFAULT false NOT NULL,
	"last_sync_at" timestamp with time zone,
	"received_since_sync" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_events" ADD CONSTRAINT "user_events_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_events" ADD CONSTRAINT "user_events_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_user_event_idx" ON "media" USING btree ("user_id","event_id","taken_at");--> statement-breakpoint
CREATE INDEX "user_events_history_idx" ON "user_events" USING btree ("user_id","starts_at" DESC NULLS LAST,"event_id" DESC NULLS LAST) WHERE "user_events"."media_count" > 0 and not "user_events"."hidden";--> statement-breakpoint
CREATE INDEX "api_keys_partner_idx" ON "api_keys" USING btree ("partner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_partner_email_key" ON "users" USING btree ("partner_id","email_key");--> statement-breakpoint
CREATE UNIQUE INDEX "users_partner_phone_key" ON "users" USING btree ("partner_id","phone_number") WHERE "users"."phone_number" is not null;--> statement-breakpoint
CREATE INDEX "users_partner_user_idx" ON "users" USING btree ("partner_id","partner_user_id");