import { openapi } from "@elysiajs/openapi";
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { AppDeps } from "./app.ts";
import { errorResponses } from "./errors.ts";
import { partnerOf } from "./gate.ts";

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
});

/**
 * `/ping`, `/health` and the OpenAPI document: the routes that touch no user data. The document needs a
 * key like every endpoint but `/ping` (docs/api.md §12), and spends no budget.
 */
export function operationalResource({ limits }: AppDeps) {
  return new Elysia({ name: "operational" })
    .use(
      openapi({
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
      }),
    )
    .get("/ping", () => ({ status: "ok" as const, version: "v1" as const }), {
      response: { 200: Ping, ...errorResponses(404, 405, 500) },
      detail: { summary: "Liveness check; needs no key and is never rate limited", security: [] },
    })
    .get(
      "/health",
      async ({ request }) => {
        const { partnerId, environment } = partnerOf(request);
        const report = await limits.report(partnerId);
        return {
          status: "ok" as const,
          version: "v1" as const,
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
        };
      },
      {
        response: { 200: Health, ...errorResponses(401, 404, 405, 500) },
        detail: { summary: "Key check and rate-limit settings; never rate limited" },
      },
    );
}
