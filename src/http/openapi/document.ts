import type { TObject, TSchema } from "@sinclair/typebox";
import { t } from "elysia";
import { jsonResponse } from "../jsonResponse.ts";
import { type RouteDefinition, route } from "../route.ts";
import type { JsonSchema } from "./documentedAs.ts";
import { HEADERS, responsesOf } from "./responses.ts";
import { DocumentSchemas } from "./schemas.ts";

/** Where every path of the document is relative to: the base address, version prefix included. */
const BASE_PATH = "/v1";

const TAGS = [
  { name: "operational", description: "Liveness, the key's check and this document" },
  { name: "users", description: "Creating, exporting and erasing a partner's users" },
  { name: "media", description: "Media batches and their deletion; matching is synchronous" },
  { name: "sync", description: "The end of a library scan, which picks the next scan's kind" },
  { name: "events", description: "The user's attended events, and hiding them" },
  { name: "stats", description: "Statistics over the user's history" },
];

/** `/users/:user_id` in the framework's syntax is `/users/{user_id}` in the document's. */
const documentPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

function parametersOf(place: "path" | "query", schema: TSchema | undefined, schemas: DocumentSchemas) {
  if (schema === undefined) return [];
  const { properties, required = [] } = schema as TObject;
  return Object.entries(properties).map(([name, member]) => {
    const { description, ...shown } = schemas.of(member);
    return {
      name,
      in: place,
      required: place === "path" || required.includes(name),
      ...(description === undefined ? {} : { description }),
      schema: shown,
    };
  });
}

/** A body whose members are all optional may be left out: the service reads no body as `{}` (docs/api.md §2). */
function requestBodyOf(schema: TSchema | undefined, schemas: DocumentSchemas) {
  if (schema === undefined) return {};
  const required = ((schema as TObject).required ?? []).length > 0;
  return { requestBody: { required, content: { "application/json": { schema: schemas.of(schema) } } } };
}

function operationOf(definition: RouteDefinition, schemas: DocumentSchemas): JsonSchema {
  const { schema } = definition;
  const { operationId, summary, description, tags, security } = schema.detail;
  const parameters = [
    ...parametersOf("path", schema.params, schemas),
    ...parametersOf("query", schema.query, schemas),
  ];
  return {
    operationId,
    summary,
    ...(description === undefined ? {} : { description }),
    tags: tags ?? ["operational"],
    ...(security === undefined ? {} : { security }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...requestBodyOf(schema.body, schemas),
    responses: responsesOf(definition, schemas),
  };
}

/**
 * The OpenAPI 3.1 document of the routes, in their order: paths relative to the base address (which
 * `servers` names), the named schemas as components, every response's headers and error codes.
 */
export function openapiDocumentOf(routes: readonly RouteDefinition[]): JsonSchema {
  const schemas = new DocumentSchemas();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const definition of routes) {
    const path = documentPath(definition.path);
    paths[path] = { ...paths[path], [definition.method.toLowerCase()]: operationOf(definition, schemas) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "rollcall partner API",
      version: "v1",
      description:
        "Matches camera-roll metadata against a live-event catalog. Reference: docs/api.md in the rollcall repository.",
    },
    servers: [
      {
        url: BASE_PATH,
        description: "This deployment; the base address, version prefix included, is what a client is given",
      },
    ],
    security: [{ partnerKey: [] }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: { partnerKey: { type: "apiKey", in: "header", name: "X-PARTNER-API-KEY" } },
      schemas: schemas.components,
      headers: HEADERS,
    },
  };
}

const members = () => t.Record(t.String(), t.Unknown());

const OpenApiDocument = t.Object(
  {
    openapi: t.String(),
    info: members(),
    servers: t.Array(members()),
    paths: members(),
    components: members(),
  },
  { title: "OpenApiDocument", description: "This document: OpenAPI 3.1" },
);

/**
 * `GET /openapi.json`. It needs a key like every endpoint but `/ping` (docs/api.md §12) and spends no
 * budget. `routes` is asked for when the app is built, so the list of routes can hold this one too.
 */
export const openapiRoute = (routes: () => readonly RouteDefinition[]) =>
  route({
    method: "GET",
    path: "/openapi.json",
    policy: { auth: true, budget: null },
    schema: {
      response: { 200: OpenApiDocument },
      detail: {
        operationId: "getOpenApiDocument",
        description: "Paths are relative to the base address that servers names (docs/api.md §12).",
        summary: "This OpenAPI document",
      },
    },
    handle: () => {
      const text = JSON.stringify(openapiDocumentOf(routes()));
      return () => jsonResponse(text);
    },
  });
