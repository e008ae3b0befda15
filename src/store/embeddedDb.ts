import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { privateDataDir } from "./embeddedFiles.ts";
import { applyLiveSql } from "./liveSql.ts";
import { migrateNamed, migrationsFolder, type OnMigration } from "./migrations.ts";
import { answersWithin, counted, poolUse } from "./poolUse.ts";
import { type Runnable, statementOf } from "./renderedStatement.ts";
import * as schema from "./schema/index.ts";
import { type Db, rowsOf, type Store, type Tx } from "./store.ts";

/** The embedded database (PGlite) under a data directory: what runs when no DATABASE_URL is given. */

/** Raised when another live process (a running server, or a CLI import) has the embedded database open. */
export class EmbeddedDatabaseBusyError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * PGlite is an in-process database: a second process opening the same directory would work on its own
 * copy and overwrite the first one's files on close, silently losing data. So the directory is locked
 * for the lifetime of the opening process (a pid file, created exclusively); a lock whose process has
 * died is taken over. Returns the release function.
 */
function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "rollcall.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(path, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new EmbeddedDatabaseBusyError(
          `the embedded database in ${dataDir} is in use by process ${holder} (a running server or another ` +
            "command); stop it first, or run the server and the CLI on PostgreSQL with DATABASE_URL",
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new EmbeddedDatabaseBusyError(`could not lock the embedded database in ${dataDir}`);
}

export async function openPglite(
  dataDir: string,
  migrate: boolean,
  onMigration: OnMigration,
): Promise<Store> {
  const files = privateDataDir(dataDir);
  const unlock = lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({ fs: files });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = drizzlePglite(pglite, { schema }) as unknown as Db;
  if (migrate) {
    await migrateNamed(
      (text) => pglite.query(text),
      () => migratePglite(drizzlePglite(pglite), { migrationsFolder }),
      onMigration,
    );
    await applyLiveSql((statement) => pglite.exec(statement));
  }
  const embedded = poolUse("embedded", 1);
  const read = <T>(statement: Runnable) =>
    counted(embedded, async () => rowsOf<T>(await db.execute(statementOf(statement))));
  return {
    kind: "pglite",
    db,
    client: null,
    exportClient: null,
    standby: null,
    rows: <T>(statement: Runnable) =>
      counted(embedded, async () => rowsOf<T>(await db.execute(statementOf(statement)))),
    transaction: (work) =>
      db.transaction((tx: Tx) =>
        work({
          rows: <T>(statement: Runnable) =>
            counted(embedded, async () => rowsOf<T>(await tx.execute(statementOf(statement)))),
        }),
      ),
    read,
    readForUser: (_owner, statementFor) => read(statementFor(null)),
    topology: () => ({ writes: "embedded", reads: null, lagSeconds: null, standbyReads: null }),
    pools: () => [{ ...embedded }],
    ping: (timeoutMs) => answersWithin(() => pglite.query("select 1"), timeoutMs),
    close: async () => {
      await pglite.close();
      unlock();
    },
  };
}
