/** A request that is valid on its route, given a user id: the base the API tests then break. */
export type RouteCall = { method: "GET" | "POST" | "DELETE"; path: string; body?: unknown };

const aMediaBatch = {
  media: [{ id: "asset-1", taken_at: "2024-05-01T20:00:00Z", latitude: 48.85, longitude: 2.35 }],
};

/**
 * Every route under /v1/users/{user_id}: each must answer user_not_found for a user the key cannot see.
 * The erasure comes last, so a loop that calls them all for a user it may see erases that user last.
 */
export function userRoutes(userId: string): RouteCall[] {
  return [
    { method: "POST", path: `/v1/users/${userId}/media`, body: aMediaBatch },
    { method: "POST", path: `/v1/users/${userId}/sync-complete`, body: {} },
    { method: "GET", path: `/v1/users/${userId}/events` },
    { method: "GET", path: `/v1/users/${userId}/stats` },
    { method: "POST", path: `/v1/users/${userId}/events/1/hide`, body: {} },
    { method: "POST", path: `/v1/users/${userId}/events/1/unhide`, body: {} },
    { method: "POST", path: `/v1/users/${userId}/media/delete`, body: { ids: ["asset-1"] } },
    { method: "GET", path: `/v1/users/${userId}/export` },
    { method: "DELETE", path: `/v1/users/${userId}` },
  ];
}

/** Every route that requires X-PARTNER-API-KEY. */
export function keyedRoutes(userId: string): RouteCall[] {
  return [
    { method: "GET", path: "/v1/health" },
    { method: "GET", path: "/v1/openapi.json" },
    { method: "POST", path: "/v1/users", body: { email: "someone@example.com" } },
    ...userRoutes(userId),
  ];
}

/** The routes with a request body (docs/api.md §2 steps 6 and 7 apply to them). */
export const postRoutes = (userId: string): RouteCall[] =>
  keyedRoutes(userId).filter((route) => route.method === "POST");

export const SOME_UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
