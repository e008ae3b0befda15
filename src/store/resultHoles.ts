import type postgres from "postgres";

/**
 * postgres.js (3.4.9) places each row of a result at the connection's count of rows so far, a count
 * that only a completed statement sets back to zero. A statement that fails after sending rows (a
 * cancel, a timeout, an error in a later row) never completes, so the next result on that connection,
 * whichever request it serves, starts with that many holes before its own rows, which are right and in
 * order: read as it stands, its first row is missing (porsager/postgres#1181). Every pool's client is
 * made through `wholeResults`, so each of its results has its rows moved back to the start. A reserved
 * connection needs nothing: a failure there is followed by its ROLLBACK, and every reservation starts
 * with a BEGIN, each of which completes.
 */

/** `rows` with any leading holes taken out, in place, so a result keeps its count and columns. */
function withoutLeadingHoles<T>(rows: T[]): T[] {
  if (rows.length === 0 || 0 in rows) return rows;
  let first = 1;
  while (first < rows.length && !(first in rows)) first++;
  for (let i = first; i < rows.length; i++) rows[i - first] = rows[i] as T;
  rows.length -= first;
  return rows;
}

const whole = (result: unknown) => (Array.isArray(result) ? withoutLeadingHoles(result) : result);

/**
 * A driver statement whose awaited result, rows or `values()`, has no leading holes; its other
 * methods (`cursor`, `writable`, `cancel`) are as they were. Changed in place: it stays the statement
 * its request tracks.
 */
function resultsWithoutHoles<S extends PromiseLike<unknown>>(statement: S): S {
  const then = statement.then;
  // biome-ignore lint/suspicious/noThenProperty: awaiting the driver's statement reads it through then().
  Object.defineProperty(statement, "then", {
    value: (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) =>
      then.call(
        statement,
        (result) => (typeof onFulfilled === "function" ? onFulfilled(whole(result)) : whole(result)),
        onRejected,
      ),
  });
  return statement;
}

/** A pool's client whose statements (`unsafe`, as every statement of the store is sent) resolve whole. */
export function wholeResults(client: postgres.Sql): postgres.Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== "unsafe") return Reflect.get(target, property, receiver);
      return (...args: Parameters<postgres.Sql["unsafe"]>) => resultsWithoutHoles(target.unsafe(...args));
    },
  });
}
