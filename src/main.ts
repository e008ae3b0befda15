import { Elysia } from "elysia";
import { ConfigError, loadConfig } from "./config.ts";
import { openStore } from "./store/db.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const store = await openStore(config);
  const app = new Elysia({ prefix: "/v1" })
    .get("/ping", () => ({ status: "ok", version: "v1" }))
    .listen({
      port: config.port,
      hostname: config.host,
    });
  console.log(`rollcall listening on http://${config.host}:${app.server?.port}/v1`);
  const shutdown = async () => {
    await app.stop();
    await store.close();
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
