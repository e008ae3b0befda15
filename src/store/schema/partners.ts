import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** A partner organization. Its id is the prefix of every key it holds (`<partner_id>-<secret>`). */
export const partners = pgTable(
  "partners",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Per-partner overrides of the RATE_LIMIT_* budgets; null falls back to the service default. */
    ingestLimit: integer("ingest_limit"),
    readLimit: integer("read_limit"),
    writeLimit: integer("write_limit"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [check("partners_id_shape", sql`${t.id} ~ '^[a-z0-9_]{1,64}$'`)],
);

/**
 * Issued API keys. Only the SHA-256 of the whole key is kept: the secret carries 256 random bits, so a
 * fast hash is enough (no salt or stretching needed against guessing) and lets a lookup be one index probe.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    partnerId: text("partner_id")
      .notNull()
      .references(() => partners.id),
    environment: text("environment", { enum: ["production", "sandbox"] }).notNull(),
    label: text("label"),
    keyHash: text("key_hash").notNull().unique(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    /** When a request last used the key, to within a minute (recordKeyUse); null: never used. */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("api_keys_partner_idx").on(t.partnerId)],
);
