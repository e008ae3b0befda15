import createClient, { type Client } from "openapi-fetch";
import { RollcallError } from "./errors.ts";
import { DEFAULT_RETRY_POLICY, type RetryEvent, type RetryPolicy, retryingFetch } from "./retry.ts";
import type { paths } from "./schema.ts";
import type {
  Erasure,
  Event,
  EventPage,
  EventPageQuery,
  Health,
  HiddenState,
  MediaBatchResult,
  MediaDeletionResult,
  MediaItem,
  NewUser,
  OpenApiDocument,
  Ping,
  Stats,
  SyncState,
  UserCreated,
  UserExport,
} from "./types.ts";

export type RollcallClientOptions = {
  /** The base address, version prefix included: `https://sandbox.rollcall.example/v1`. */
  baseUrl: string;
  /** The partner's key for this environment; it stays on the partner's backend. */
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** Told of every retry before its wait, for logs and metrics. */
  onRetry?: (event: RetryEvent) => void;
  /** The `fetch` each try goes through (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
};

/** What openapi-fetch answers: the body of a success, or the error's with the response. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

/** A success's body, or the error it carries. */
async function dataOf<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw RollcallError.of(response, error ?? null);
  return data;
}

/**
 * Every endpoint of the partner API, typed from its OpenAPI document, with the specification's retries.
 * A call answers its success's body or throws a `RollcallError`. `api` is the typed openapi-fetch
 * client underneath, for calls written path by path.
 *
 * @example
 * const rollcall = createRollcallClient({ baseUrl: "https://sandbox.rollcall.example/v1", apiKey });
 * const { user_id } = await rollcall.createUser({ email: "ana@example.com" });
 */
export class RollcallClient {
  readonly api: Client<paths>;

  constructor(api: Client<paths>) {
    this.api = api;
  }

  ping(): Promise<Ping> {
    return dataOf(this.api.GET("/ping"));
  }

  health(): Promise<Health> {
    return dataOf(this.api.GET("/health"));
  }

  /** 201 for a new user, 200 with `existing: true` for the partner's user with this email. */
  createUser(user: NewUser): Promise<UserCreated> {
    return dataOf(this.api.POST("/users", { body: user }));
  }

  /** One batch of 1 to 200 items; see `syncCameraRoll` for a whole scan. */
  sendMedia(userId: string, media: MediaItem[]): Promise<MediaBatchResult> {
    return dataOf(
      this.api.POST("/users/{user_id}/media", { params: { path: { user_id: userId } }, body: { media } }),
    );
  }

  /** The end of a completed scan; `photosProcessed` is the count of assets it examined, sent or not. */
  completeSync(userId: string, photosProcessed?: number): Promise<SyncState> {
    const path = { user_id: userId };
    const body = photosProcessed === undefined ? undefined : { photos_processed: photosProcessed };
    return dataOf(this.api.POST("/users/{user_id}/sync-complete", { params: { path }, body }));
  }

  stats(userId: string, query: { top?: number } = {}): Promise<Stats> {
    return dataOf(this.api.GET("/users/{user_id}/stats", { params: { path: { user_id: userId }, query } }));
  }

  /** One page of the history; `historyPages` walks them all. */
  eventPage(userId: string, query: EventPageQuery = {}): Promise<EventPage> {
    return dataOf(this.api.GET("/users/{user_id}/events", { params: { path: { user_id: userId }, query } }));
  }

  /** Every page of the history, newest events first, following `next_cursor` while `has_more`. */
  async *historyPages(userId: string, query: Omit<EventPageQuery, "cursor"> = {}): AsyncGenerator<EventPage> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.eventPage(userId, cursor === undefined ? query : { ...query, cursor });
      yield page;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** Every event of the history, newest first, a page at a time. */
  async *history(userId: string, query: Omit<EventPageQuery, "cursor"> = {}): AsyncGenerator<Event> {
    for await (const page of this.historyPages(userId, query)) yield* page.events;
  }

  hideEvent(userId: string, eventId: number): Promise<HiddenState> {
    const path = { user_id: userId, event_id: eventId };
    return dataOf(this.api.POST("/users/{user_id}/events/{event_id}/hide", { params: { path } }));
  }

  unhideEvent(userId: string, eventId: number): Promise<HiddenState> {
    const path = { user_id: userId, event_id: eventId };
    return dataOf(this.api.POST("/users/{user_id}/events/{event_id}/unhide", { params: { path } }));
  }

  /** Kept items the camera roll lost, 1 to 200 ids a call. */
  deleteMedia(userId: string, ids: string[]): Promise<MediaDeletionResult> {
    const path = { user_id: userId };
    return dataOf(this.api.POST("/users/{user_id}/media/delete", { params: { path }, body: { ids } }));
  }

  /** Everything stored for the user, read whole. */
  exportUser(userId: string): Promise<UserExport> {
    return dataOf(this.api.GET("/users/{user_id}/export", { params: { path: { user_id: userId } } }));
  }

  eraseUser(userId: string): Promise<Erasure> {
    return dataOf(this.api.DELETE("/users/{user_id}", { params: { path: { user_id: userId } } }));
  }

  /** The OpenAPI document these types were generated from, as the service serves it now. */
  openapiDocument(): Promise<OpenApiDocument> {
    return dataOf(this.api.GET("/openapi.json"));
  }
}

export function createRollcallClient(options: RollcallClientOptions): RollcallClient {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const fetchOnce = options.fetch ?? ((request: Request) => fetch(request));
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { "X-PARTNER-API-KEY": options.apiKey },
    fetch: retryingFetch(fetchOnce, policy, options.onRetry),
  });
  return new RollcallClient(api);
}
