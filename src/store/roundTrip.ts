import type { Store } from "./db.ts";
import { againAfterStrayCancel } from "./failures.ts";
import { queryOf, type Runnable } from "./renderedStatement.ts";
import { outsideRequests } from "./requestScope.ts";

/**
 * Runs `statements` in order as one transaction and returns each one's rows. On PostgreSQL the whole
 * transaction (BEGIN, the statements, COMMIT) goes out in one write on a reserved connection and comes
 * back in one round trip: the server runs the messages in order, each statement with a fresh snapshot.
 * If one fails, the later ones fail with "transaction is aborted", COMMIT rolls back, and the first error
 * is thrown; nothing is stored. A transaction callback would cost a round trip each for BEGIN and COMMIT.
 * A lone statement is a transaction of its own: it goes out without BEGIN and COMMIT, on any connection.
 * Everything is sent at once, while the connection is known to be open, and nothing after: a connection
 * lost on the way is never released or reused (reservedConnections.ts). A transaction that a cancel of
 * another request's stopped stored nothing, so it is sent once more (failures.ts).
 */
export async function inOneRoundTrip(store: Store, statements: readonly Runnable[]): Promise<unknown[][]> {
  const [alone, ...others] = statements;
  if (alone !== undefined && others.length === 0) return [await store.rows(alone)];
  if (store.client === null) {
    return store.transaction(async (tx) => {
      const results: unknown[][] = [];
      for (const statement of statements) results.push(await tx.rows(statement));
      return results;
    });
  }
  const client = store.client;
  return againAfterStrayCancel(() => reservedRoundTrip(client, statements));
}

async function reservedRoundTrip(
  client: NonNullable<Store["client"]>,
  statements: readonly Runnable[],
): Promise<unknown[][]> {
  const connection = await client.reserve();
  try {
    const sent = statements.map((statement) => {
      const query = queryOf(statement);
      return connection.unsafe(query.sql, query.params as never[], { prepare: true });
    });
    const settled = await Promise.allSettled([
      connection.unsafe("begin"),
      ...sent,
      connection.unsafe("commit"),
    ]);
    const results: unknown[][] = [];
    for (const outcome of settled) {
      if (outcome.status === "rejected") {
        // A COMMIT called off with its request never reached PostgreSQL: end the transaction here, so
        // the connection goes back to the pool outside one.
        await outsideRequests(() => connection.unsafe("rollback")).catch(() => {});
        throw outcome.reason;
      }
      results.push([...outcome.value]);
    }
    return results.slice(1, -1);
  } finally {
    connection.release();
  }
}
