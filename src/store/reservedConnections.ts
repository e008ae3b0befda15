import postgres from "postgres";
import { againAfterStrayCancel, isConnectionFailure } from "./failures.ts";
import type { PoolUse } from "./poolUse.ts";
import { outsideRequests, reservedForRequest, sentForRequest } from "./requestScope.ts";

/** Refuses a statement on a reserved connection whose server has gone, before anything is written. */
export class ConnectionLostError extends Error {
  readonly code = "CONNECTION_CLOSED";
  constructor() {
    super("the reserved connection was lost; nothing more is sent on it");
  }
}

/**
 * Whether a statement's failure means its connection is gone: the driver failed it because the socket
 * closed or broke (its own codes, the system's), or the server ended the session (FATAL, PANIC).
 */
function losesConnection(error: unknown): boolean {
  if (error instanceof postgres.PostgresError && /^(FATAL|PANIC)$/.test(error.severity)) return true;
  return isConnectionFailure(error);
}

/** What marks each reserved connection lost, by the driver's id of the connection under it. */
const closeWatch = new Map<number, () => void>();

/**
 * A pool's `onclose`, with the driver's id of the connection that closed: a reservation on it learns
 * that its connection went even while no statement of its own was under way.
 */
export function reservedConnectionClosed(connectionId: number): void {
  closeWatch.get(connectionId)?.();
}

/**
 * A reserved connection that is never touched again once its server is gone. postgres.js (3.4) keeps a
 * reserved connection after its socket closed: a statement sent on it, or the release that hands it back
 * to the pool, writes to the closed socket (an uncaught error, and a connection that never answers
 * again). So the connection is watched: once a statement fails because the connection went, or the pool
 * reports it closed while it waited between statements, later ones are refused unsent, and release leaves
 * the connection to the pool, which already counts it as closed. Statements are sent as the current
 * request's (requestScope.ts), and `use` counts the connection busy until it is released.
 */
function guarded(connection: postgres.ReservedSql, use: PoolUse): postgres.ReservedSql {
  let lost = false;
  let held = true;
  let connectionId: number | null = null;
  const unsettled = new Set<{ cancel(): unknown }>();
  const unwatch = () => {
    if (connectionId !== null && closeWatch.get(connectionId) === markLost) closeWatch.delete(connectionId);
  };
  function markLost() {
    if (lost) return;
    lost = true;
    unwatch();
    // Statements queued behind the failed one are never failed by the driver: they would wait forever.
    for (const statement of unsettled) void Promise.resolve(statement.cancel()).catch(() => {});
  }
  const noteFailure = (error: unknown) => {
    if (losesConnection(error)) markLost();
  };
  // The driver tells a statement's `onexecute` which connection it went out on (its own transactions
  // learn theirs so); answering true leaves its pipelining as it was.
  const learnConnection = (under: { id: number }) => {
    if (connectionId === null && held && !lost) {
      connectionId = under.id;
      closeWatch.set(connectionId, markLost);
    }
    return true;
  };
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (
          query: string,
          args?: postgres.ParameterOrJSON<never>[],
          options?: postgres.UnsafeQueryOptions,
        ) => {
          if (lost) throw new ConnectionLostError();
          const watched = { ...options, onexecute: learnConnection } as postgres.UnsafeQueryOptions;
          const statement = sentForRequest(() => target.unsafe(query, args, watched));
          unsettled.add(statement);
          // Watched through the plain promise, which neither starts the statement nor changes how it runs.
          Promise.prototype.then.call(
            statement,
            () => unsettled.delete(statement),
            (error: unknown) => {
              unsettled.delete(statement);
              noteFailure(error);
            },
          );
          return statement;
        };
      }
      if (property === "release") {
        return () => {
          if (!held) return;
          held = false;
          use.busy--;
          unwatch();
          if (!lost) target.release();
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * The client with `reserve` guarded and counted in `use`: the time until a connection is handed over,
 * and the connection as busy until it is released. A reservation is the current request's: given up
 * when the request ends first (requestScope.ts).
 */
export function guardedReservations(client: postgres.Sql, use: PoolUse): postgres.Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "reserve") return Reflect.get(target, property, receiver);
      return async () => {
        const asked = performance.now();
        const reserved = await reservedForRequest(() => target.reserve());
        use.waits++;
        use.waitSeconds += (performance.now() - asked) / 1000;
        use.busy++;
        return guarded(reserved, use);
      };
    },
  });
}

/**
 * Runs `work` in one transaction on a reserved connection of `client` (from `guardedReservations`): it
 * commits when `work` returns and rolls back when it throws. The rollback is sent even when the request
 * has ended early, so the connection goes back to the pool outside any transaction; on a lost
 * connection nothing is sent, as the server has already rolled back. `mode` follows BEGIN (an isolation
 * level, `read only`). A transaction that a cancel another request sent stopped was rolled back whole,
 * so it runs once more from its BEGIN (`againAfterStrayCancel`): `work` keeps its state inside itself.
 */
export function inTransaction<T>(
  client: postgres.Sql,
  work: (connection: postgres.ReservedSql) => Promise<T>,
  mode = "",
): Promise<T> {
  return againAfterStrayCancel(() => transactionOnce(client, work, mode));
}

async function transactionOnce<T>(
  client: postgres.Sql,
  work: (connection: postgres.ReservedSql) => Promise<T>,
  mode: string,
): Promise<T> {
  const connection = await client.reserve();
  try {
    await connection.unsafe(mode === "" ? "begin" : `begin ${mode}`);
    const result = await work(connection);
    await connection.unsafe("commit");
    return result;
  } catch (error) {
    try {
      await outsideRequests(() => connection.unsafe("rollback"));
    } catch {
      // Lost with its connection, or refused because it was: either way nothing stays open.
    }
    throw error;
  } finally {
    connection.release();
  }
}
