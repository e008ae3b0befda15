import { dirname, join } from "node:path";

/** Drizzle's migrations (tables only; the live SQL is in ./sql), applied by both databases at open. */
export const migrationsFolder = join(dirname(new URL(import.meta.url).pathname), "..", "..", "drizzle");
