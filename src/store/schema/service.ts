import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Service-wide settings generated on first boot, such as the cursor-signing secret when CURSOR_SECRET
 * is not set: every instance on one database then signs cursors alike and they survive restarts.
 */
export const serviceSettings = pgTable("service_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});
