CREATE SEQUENCE "public"."feed_ids" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1000000000 CACHE 1;--> statement-breakpoint
CREATE TABLE "external_ids" (
	"source" text NOT NULL,
	"kind" text NOT NULL,
	"external_id" text NOT NULL,
	"id" integer NOT NULL,
	"linked" boolean DEFAULT false NOT NULL,
	CONSTRAINT "external_ids_source_kind_external_id_pk" PRIMARY KEY("source","kind","external_id")
);
--> statement-breakpoint
CREATE INDEX "external_ids_id" ON "external_ids" USING btree ("id");