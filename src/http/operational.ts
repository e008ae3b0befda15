import { openapi } from "@elysiajs/openapi";
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { errorResponses } from "./errors.ts";
import { partnerOf } from "./gate.ts";
import { route } from "./route.ts";

const Ping = t.Object({ status: t.Literal("ok"), version: t.Literal("v1") });

const Health = t.Object({
  status: t.Literal("ok"),
  version: t.Literal("v1"),
  partner_id: t.String(),
  environment: t.Union([t.Literal("production"), t.Literal("sandbox")]),
  rate_limit: t.Object({
    enabled: t.Boolean(),
    // Plain TypeBox integers: elysia's t.Integer would document itself as "integer or numeric string".
    window_seconds: Type.Integer(),
    ingest_per_window: t.Union([Type.Integer(), t.Null()]),
    read_per_window: t.Union([Type.Integer(), t.Null()]),
    write_per_window: t.Union([Type.Integer(), t.Null()]),
    store: t.Union([t.Literal("memory"), t.Literal("redis")]),
    degraded: t.Boolean(),
  }),
  build: t.Object({ version: t.String(), commit: t.Union([t.String(), t.Null()]) }),
});

/**
 * The OpenAPI document, served by the framework's plugin from the routes registered after it. It needs
 * a key like every endpoint but `/ping` (docs/api.md §12), and spends no budget; its policy is in the
 * list of the API's routes (src/http/apiRoutes.ts) with the routes'.
 */
export function openapiDocument() {
  return openapi({
    path: "/openapi",
    specPath: "/openapi.json",
    documentation: {
      info: {
        title: "rollcall partner API",
        version: "v1",
        description:
          "Matches camera-roll metadata against a live-event catalog. Reference: docs/api.md in the rollcall repository.",
      },
      components: {
        securitySchemes: { partnerKey: { type: "apiKey", in: "header", name: "X-PARTNER-API-KEY" } },
      },
      security: [{ partnerKey: [] }],
    },
  });
}

export const pingRoute = route({
  method: "GET",
  path: "/ping",
  policy: { auth: false, budget: null },
  schema: {
    response: { 200: Ping, ...errorResponses(404, 405, 500) },
    detail: { summary: "Liveness check; needs no key and is never rate limited", security: [] },
  },
  handle: () => () => ({ status: "ok" as const, version: "v1" as const }),
});

export const healthRoute = route({
  method: "GET",
  path: "/health",
  policy: { auth: true, budget: null },
  schema: {
    response: { 200: Health, ...errorResponses(401, 404, 405, 500) },
    detail: { summary: "Key check and rate-limit settings; never rate limited" },
  },
  handle:
    ({ limits, build }) =>
    async ({ request }): Promise<typeof Health.static> => {
      const { partnerId, environment } = partnerOf(request);
      const report = await limits.report(partnerId);
      return {
        status: "ok",
        version: "v1",
        partner_id: partnerId,
        environment,
        rate_limit: {
          enabled: report.enabled,
          window_seconds: report.window_seconds,
          ingest_per_window: report.ingest_per_window,
          read_per_window: report.read_per_window,
          write_per_window: report.write_per_window,
          store: report.store,
          degraded: report.degraded,
        },
        build: { version: build.version, commit: build.commit },
      };
    },
});
