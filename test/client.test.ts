/** The TypeScript client (clients/typescript) against a real rollcall: every endpoint, typed, and the history's pages. */
import { describe, expect, test } from "bun:test";
import { createRollcallClient, type RollcallClient, RollcallError } from "../clients/typescript/src/index.ts";
import {
  AT_VENUE_1,
  AT_VENUE_2,
  DURING_100,
  DURING_200,
  mediaTestFile,
  photo,
} from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

/** A client of the fixture's server, counting the tries that reach it. */
function clientOf(key = fixture.key): { client: RollcallClient; tries: string[] } {
  const tries: string[] = [];
  const client = createRollcallClient({
    baseUrl: `${fixture.server.baseUrl}/v1`,
    apiKey: key,
    fetch: (request) => {
      tries.push(`${request.method} ${new URL(request.url).pathname}`);
      return fetch(request);
    },
  });
  return { client, tries };
}

describe("the TypeScript client", () => {
  test("answers every endpoint with its typed body, given the base address with its version prefix", async () => {
    const { client, tries } = clientOf();
    expect(await client.ping()).toEqual({ status: "ok", version: "v1" });
    expect((await client.health()).partner_id).toBe("acme");
    const created = await client.createUser({ email: "client@example.com", partner_user_id: "p-1" });
    expect(created.existing).toBe(false);
    expect((await client.createUser({ email: "CLIENT@example.com" })).user_id).toBe(created.user_id);
    const userId = created.user_id;

    const batch = await client.sendMedia(userId, [
      photo("a", DURING_100),
      { ...photo("b", DURING_200, AT_VENUE_2), thumbnail_url: null, media_type: "video" },
      { id: "c", taken_at: "2025-07-04T21:00:00", ...AT_VENUE_1 },
    ]);
    expect([batch.accepted, batch.matched]).toEqual([2, 2]);
    expect(batch.rejected).toEqual([{ id: "c", reason: "invalid", detail: "taken_at_without_offset" }]);
    expect(batch.events.map((event) => event.id).toSorted()).toEqual([100, 200]);

    expect((await client.completeSync(userId)).has_synced).toBe(true);
    expect((await client.completeSync(userId, 3)).has_synced).toBe(true);
    const stats = await client.stats(userId, { top: 1 });
    expect([stats.events_count, stats.top_venues.length]).toEqual([2, 1]);

    expect(await client.hideEvent(userId, 200)).toEqual({ event_id: 200, hidden: true });
    expect((await client.eventPage(userId, { include_media: false })).events.map((e) => e.id)).toEqual([100]);
    expect(await client.unhideEvent(userId, 200)).toEqual({ event_id: 200, hidden: false });
    const page = await client.eventPage(userId, { limit: 7, include_media: false, min_confidence: 0 });
    expect(page.events.map((event) => [event.id, event.media])).toEqual([
      [200, undefined],
      [100, undefined],
    ]);

    const exported = await client.exportUser(userId);
    expect(exported.media.map((item) => [item.media_id, item.taken_at])).toEqual([
      ["a", "2025-07-04T21:00:00.000Z"],
      ["b", "2025-08-01T20:00:00.000Z"],
    ]);
    expect(await client.deleteMedia(userId, ["b", "zz"])).toEqual({ deleted: ["b"], not_found: ["zz"] });
    expect((await client.openapiDocument()).openapi).toBe("3.1.0");
    expect(await client.eraseUser(userId)).toEqual({ user_id: userId, deleted: true });
    // Paths are relative to the base address: no call doubled the version prefix.
    expect(tries.every((tried) => tried.split(" ")[1]?.startsWith("/v1/") && !tried.includes("/v1/v1"))).toBe(
      true,
    );
  });

  test("walks the history a page at a time, newest first, until has_more is false", async () => {
    const { client } = clientOf();
    const { user_id: userId } = await client.createUser({ email: "pages@example.com" });
    await client.sendMedia(userId, [photo("a", DURING_100), photo("b", DURING_200, AT_VENUE_2)]);
    const pages = [];
    for await (const page of client.historyPages(userId, { limit: 1 })) pages.push(page);
    expect(pages.map((page) => [page.events.map((event) => event.id), page.has_more])).toEqual([
      [[200], true],
      [[100], false],
    ]);
    const events = [];
    for await (const event of client.history(userId, { limit: 1, include_media: false }))
      events.push(event.id);
    expect(events).toEqual([200, 100]);
  });

  test("an error is a RollcallError with the envelope's code, after a single try for a 4xx", async () => {
    const { client, tries } = clientOf();
    const missing = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
    const failure = await client.stats(missing).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RollcallError);
    const { status, code, requestId } = failure as RollcallError;
    expect([status, code, typeof requestId]).toEqual([404, "user_not_found", "string"]);
    expect(tries).toEqual([`GET /v1/users/${missing}/stats`]);

    const refused = await clientOf("acme-not-a-key").client.ping();
    expect(refused.status).toBe("ok");
    const unauthorized = await clientOf("acme-not-a-key")
      .client.health()
      .catch((error: unknown) => error);
    expect((unauthorized as RollcallError).code).toBe("invalid_api_key");
    const invalid = await client.sendMedia(missing, []).catch((error: unknown) => error);
    expect([(invalid as RollcallError).status, (invalid as RollcallError).code]).toEqual([
      400,
      "empty_batch",
    ]);
  });
});
