import { once } from "node:events";
import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { sql } from "drizzle-orm";
import type postgres from "postgres";
import type { Store, TransactionRows } from "../db.ts";
import { inTransaction } from "../reservedConnections.ts";
import type { BulkTable } from "./staging.ts";

/**
 * The import runs in one transaction on either driver. Bulk rows go to temporary staging tables: over
 * COPY on PostgreSQL (the fastest path into the server), and in JSON batches on PGlite, which has no
 * postgres.js client. Everything after staging is plain SQL that both drivers run alike.
 */

export interface BulkWriter<T> {
  write(items: readonly T[]): Promise<void>;
  /** Ends the bulk load; the transaction accepts other statements only after this. */
  close(): Promise<void>;
}

export interface CatalogTransaction {
  query<T>(text: string): Promise<T[]>;
  /** One writer at a time: COPY occupies the connection until it is closed. */
  bulk<T>(table: BulkTable<T>): BulkWriter<T>;
}

class CopyWriter<T> implements BulkWriter<T> {
  private stream: Writable | null = null;

  constructor(
    private readonly tx: postgres.ReservedSql,
    private readonly table: BulkTable<T>,
  ) {}

  async write(items: readonly T[]): Promise<void> {
    if (items.length === 0) return;
    if (this.stream === null) {
      const statement = `copy ${this.table.name} (${this.table.columns.join(", ")}) from stdin`;
      this.stream = await this.tx.unsafe(statement).writable();
    }
    let text = "";
    for (const item of items) text += this.table.copyLines(item);
    // Waiting for drain keeps at most one chunk buffered; `once` also rejects if the COPY fails meanwhile.
    if (!this.stream.write(text)) await once(this.stream, "drain");
  }

  async close(): Promise<void> {
    if (this.stream === null) return;
    this.stream.end();
    await finished(this.stream);
    this.stream = null;
  }
}

function postgresTransaction(tx: postgres.ReservedSql): CatalogTransaction {
  return {
    query: async <T>(text: string) => (await tx.unsafe(text)) as unknown as T[],
    bulk: (table) => new CopyWriter(tx, table),
  };
}

function pgliteTransaction(tx: TransactionRows): CatalogTransaction {
  return {
    query: (text) => tx.rows(sql.raw(text)),
    bulk: (table) => ({
      async write(items) {
        if (items.length === 0) return;
        const objects = items.flatMap((item) =>
          table
            .rows(item)
            .map((row) => Object.fromEntries(table.columns.map((column, i) => [column, row[i]]))),
        );
        const name = sql.raw(table.name);
        const list = sql.raw(table.columns.join(", "));
        await tx.rows(
          sql`insert into ${name} (${list}) select ${list} from json_populate_recordset(null::${name}, ${JSON.stringify(objects)}::json)`,
        );
      },
      async close() {},
    }),
  };
}

/** Runs `work` in one transaction: it commits when `work` returns and rolls back when it throws. */
export async function withCatalogTransaction<T>(
  store: Store,
  work: (tx: CatalogTransaction) => Promise<T>,
): Promise<T> {
  const client = store.client;
  if (client !== null) {
    return inTransaction(client, (connection) => work(postgresTransaction(connection)));
  }
  return store.transaction((tx) => work(pgliteTransaction(tx)));
}
