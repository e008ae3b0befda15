import { Elysia } from "elysia";
import { loadConfig } from "../src/config.ts";
import { MediaBatchBody } from "../src/http/mediaSchema.ts";

/**
 * The ingest baseline: the media route with the service's own TypeBox schema, parsing and validating
 * each batch and doing nothing else (no key, no user, no matching, no database). Whatever rollcall adds
 * on top of this is what its batches/s is measured against. Listens on PORT/HOST like the service.
 */
const config = loadConfig();

const app = new Elysia({ prefix: "/v1" }).post(
  "/users/:user_id/media",
  ({ body }) => ({ accepted: body.media.length }),
  { body: MediaBatchBody },
);

app.listen({ port: config.port, hostname: config.host });
console.log(`bare listening on http://${config.host}:${app.server?.port}/v1`);

const stop = async () => {
  await app.stop();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
