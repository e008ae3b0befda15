import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { partners } from "./partners.ts";

export type UserAddress = {
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country?: string;
};

/** A partner's user: the profile and the partner-user link live in one row, since a user has one partner. */
export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    partnerId: text("partner_id")
      .notNull()
      .references(() => partners.id),
    email: text("email").notNull(),
    /** Lowercased email: the idempotency key of user creation within a partner. */
    emailKey: text("email_key").notNull(),
    partnerUserId: text("partner_user_id"),
    firstName: text("first_name"),
    lastName: text("last_name"),
    phoneNumber: text("phone_number"),
    address: jsonb("address").$type<UserAddress>(),
    hasSynced: boolean("has_synced").notNull().default(false),
    lastSyncAt: timestamp("last_sync_at", { withTimezone: true, mode: "date" }),
    /** Whether an accepted item arrived since the last sync-complete: infers an omitted photos_processed. */
    receivedSinceSync: boolean("received_since_sync").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /**
     * Grows with every acknowledged change of what the user's reads show (a batch, a deletion, a hide, a
     * sync-complete): a standby whose copy of the row is older has not replayed the user's last write
     * (src/store/standbyReads.ts).
     */
    revision: bigint("revision", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    uniqueIndex("users_partner_email_key").on(t.partnerId, t.emailKey),
    uniqueIndex("users_partner_phone_key")
      .on(t.partnerId, t.phoneNumber)
      .where(sql`${t.phoneNumber} is not null`),
    index("users_partner_user_idx").on(t.partnerId, t.partnerUserId),
  ],
);
