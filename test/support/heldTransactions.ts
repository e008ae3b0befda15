import { connect, type Socket } from "node:net";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import type { TestServer } from "./server.ts";

/**
 * What a test needs to hold the database against the service and to see what the service holds:
 * a table locked from a connection of the test's own, the service's open transactions, and clients
 * that read an answer slowly or not at all.
 */

/** Locks `table` (ACCESS EXCLUSIVE: even reads wait) until the returned function is called. */
export async function lockTable(url: string, table: string): Promise<() => Promise<void>> {
  const locker = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: "test-locker" },
  });
  let unlock: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    unlock = resolve;
  });
  let locked: () => void = () => {};
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = locker.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    locked();
    await released;
  });
  await holding;
  return async () => {
    unlock();
    await transaction;
    await locker.end();
  };
}

/** The service's connections (application name `rollcall`, the test's own excluded) inside a transaction or a statement. */
export async function serviceActivity(server: TestServer): Promise<{ state: string; query: string }[]> {
  return server.store.rows<{ state: string; query: string }>(
    sql`select state, left(query, 80) as query from pg_stat_activity
        where datname = current_database() and application_name = 'rollcall' and pid <> pg_backend_pid()
          and (xact_start is not null or state = 'active')`,
  );
}

/** A request on a raw connection whose answer is read only as far as `until` asks, then left unread. */
export type RawReader = {
  /** Everything received so far. */
  received(): Buffer;
  /** Resolves once the server has closed the connection (or it failed). */
  closed: Promise<void>;
  /** Starts reading again. */
  resume(): void;
  destroy(): void;
};

/** Sends `GET path` with `key` and stops reading once `bytes` of the answer have arrived. */
export function readUpTo(baseUrl: string, path: string, key: string, bytes: number): Promise<RawReader> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let announced = false;
    const socket: Socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: rollcall.test\r\nX-PARTNER-API-KEY: ${key}\r\n\r\n`);
    });
    const closed = new Promise<void>((done) => {
      socket.once("close", () => done());
    });
    const reader: RawReader = {
      received: () => Buffer.concat(chunks),
      closed,
      resume: () => socket.resume(),
      destroy: () => socket.destroy(),
    };
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (!announced && size >= bytes) {
        announced = true;
        socket.pause();
        resolve(reader);
      }
    });
    socket.once("error", (error) => (announced ? undefined : reject(error)));
    socket.once("close", () => {
      if (!announced) resolve(reader);
    });
  });
}

/** The status line's code of a raw answer. */
export function statusOf(raw: Buffer): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw.subarray(0, 32).toString("latin1"))?.[1] ?? 0);
}
