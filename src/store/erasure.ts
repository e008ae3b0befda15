import { sql } from "drizzle-orm";
import type { Store, TransactionRows } from "./db.ts";

/**
 * The tables that hold a user's rows, read from the database's own catalog: every table of the
 * service's schema with a `user_id` column (the convention every per-user table follows), ordered so
 * that a table comes before any of these it references by foreign key. Read per erasure rather than
 * listed here, so a table a later migration adds is erased with the rest without anyone remembering to.
 */
async function userTables(tx: TransactionRows): Promise<string[]> {
  const tables = await tx.rows<{ name: string }>(
    sql`select c.relname as name from pg_attribute a
        join pg_class c on c.oid = a.attrelid
        join pg_namespace n on n.oid = c.relnamespace
        where a.attname = 'user_id' and not a.attisdropped and c.relkind in ('r', 'p')
          and n.nspname = current_schema()
        order by c.relname`,
  );
  const references = await tx.rows<{ child: string; parent: string }>(
    sql`select child.relname as child, parent.relname as parent from pg_constraint k
        join pg_class child on child.oid = k.conrelid
        join pg_class parent on parent.oid = k.confrelid
        join pg_namespace n on n.oid = child.relnamespace
        where k.contype = 'f' and n.nspname = current_schema()`,
  );
  return childrenFirst(
    tables.map((t) => t.name),
    references,
  );
}

/** `tables` ordered so that each comes before every table of the list it references. */
export function childrenFirst(
  tables: readonly string[],
  references: readonly { child: string; parent: string }[],
): string[] {
  const ordered: string[] = [];
  const placed = new Set<string>();
  const place = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return;
    path.add(table);
    // Whatever references this table goes first.
    for (const { child, parent } of references) {
      if (parent === table && child !== table && tables.includes(child)) place(child, path);
    }
    placed.add(table);
    ordered.push(table);
  };
  for (const table of tables) place(table, new Set());
  return ordered;
}

/**
 * Erases the partner's user and everything stored for them in one transaction (docs/api.md §16); false,
 * with nothing changed, when the partner has no such user.
 *
 * The user's row is locked first, the lock every batch of the user takes (`open_user_batch`), so a batch
 * racing the erasure either committed before it, and its rows are erased with the rest, or waits and
 * then finds no user (404): no batch can write between the deletes. The profile goes last, since the
 * other tables reference it; with it go the email and phone keys, free for a new user.
 *
 * Other users are not held up: the erasure takes no lock but this user's rows.
 */
export async function eraseUser(store: Store, partnerId: string, userId: string): Promise<boolean> {
  return store.transaction(async (tx) => {
    const locked = await tx.rows(
      sql`select id from users where id = ${userId}::uuid and partner_id = ${partnerId} for update`,
    );
    if (locked.length === 0) return false;
    for (const table of await userTables(tx)) {
      await tx.rows(sql`delete from ${sql.identifier(table)} where user_id = ${userId}::uuid`);
    }
    await tx.rows(sql`delete from users where id = ${userId}::uuid`);
    return true;
  });
}
