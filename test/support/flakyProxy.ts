import { connect, createServer, type Socket } from "node:net";

/** What the proxy does with one connection: pass it on, cut it once a request arrived, or answer 503. */
export type ConnectionFate = "forward" | "drop" | "unavailable";

export type FlakyProxy = {
  /** `http://127.0.0.1:PORT`, in front of the upstream. */
  baseUrl: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
};

const UNAVAILABLE =
  "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 11\r\nconnection: close\r\n\r\nunavailable";

/**
 * A TCP proxy in front of a real server whose first connections meet the given fates, in order, and
 * every later one is forwarded: what a client meets when a load balancer restarts or a link drops.
 */
export async function startFlakyProxy(upstream: string, fates: ConnectionFate[]): Promise<FlakyProxy> {
  const { hostname, port } = new URL(upstream);
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    const fate = fates[accepted] ?? "forward";
    accepted += 1;
    if (fate === "drop") {
      client.once("data", () => client.destroy());
      return;
    }
    if (fate === "unavailable") {
      client.once("data", () => client.end(UNAVAILABLE));
      return;
    }
    const onward = connect(Number(port), hostname);
    sockets.add(onward);
    onward.on("error", () => client.destroy());
    client.on("close", () => onward.destroy());
    onward.on("close", () => {
      sockets.delete(onward);
      client.destroy();
    });
    client.pipe(onward);
    onward.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const proxyPort = typeof address === "object" && address !== null ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${proxyPort}`,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
