import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { partnerOf } from "./gate.ts";
import { route } from "./route.ts";

const Ping = t.Object({ status: t.Literal("ok"), version: t.Literal("v1") }, { title: "Ping" });

const Health = t.Object(
  {
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
  },
  { title: "Health" },
);

export const pingRoute = route({
  method: "GET",
  path: "/ping",
  policy: { auth: false, budget: null },
  schema: {
    response: { 200: Ping },
    detail: {
      operationId: "ping",
      description:
        "No key, no budget; answers while the process runs, whatever the database does (docs/api.md §12).",
      summary: "Liveness check; needs no key and is never rate limited",
      security: [],
    },
  },
  handle: () => () => ({ status: "ok" as const, version: "v1" as const }),
});

export const healthRoute = route({
  method: "GET",
  path: "/health",
  policy: { auth: true, budget: null },
  schema: {
    response: { 200: Health },
    detail: {
      operationId: "getHealth",
      description:
        "Needs a valid key and spends no budget: checks the key and reports the rate-limit settings (docs/api.md §12).",
      summary: "Key check and rate-limit settings; never rate limited",
    },
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
