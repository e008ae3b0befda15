import type { components, operations } from "./schema.ts";

type Schemas = components["schemas"];

/** The API's objects under the names the OpenAPI document gives them. */
export type Event = Schemas["Event"];
export type Venue = Schemas["Venue"];
export type Performer = Schemas["Performer"];
export type EventMedia = Schemas["EventMedia"];
export type MediaItem = Schemas["MediaItem"];
export type MediaBatchResult = Schemas["MediaBatchResult"];
export type Match = Schemas["Match"];
export type Rejection = Schemas["Rejection"];
export type NewUser = Schemas["NewUser"];
export type UserCreated = Schemas["UserCreated"];
export type SyncState = Schemas["SyncState"];
export type EventPage = Schemas["EventPage"];
export type Stats = Schemas["Stats"];
export type HiddenState = Schemas["HiddenState"];
export type MediaDeletionResult = Schemas["MediaDeletionResult"];
export type Erasure = Schemas["Erasure"];
export type UserExport = Schemas["UserExport"];
export type Health = Schemas["Health"];
export type Ping = Schemas["Ping"];
export type ErrorEnvelope = Schemas["Error"];
export type OpenApiDocument = Schemas["OpenApiDocument"];

/** The query of a history page: `limit`, `cursor`, `include_media`, `min_confidence`. */
export type EventPageQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>;
