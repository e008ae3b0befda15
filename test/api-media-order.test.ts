/** Media of one event that share a capture instant come in code-point order of their ids, whatever the database's collation. */
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { AT_VENUE_1, DURING_100, mediaTestFile, photo } from "./support/mediaCatalog.ts";

const fixture = mediaTestFile();

describe("media order", () => {
  test("ties on taken_at break by media_id in code-point order, even on an ICU collation", async () => {
    // The column as a database created with an ICU locale would have it, where "a" sorts before "B".
    await fixture.server.store.rows(
      sql`alter table media alter column media_id type text collate "en-US-x-icu"`,
    );
    const userId = await fixture.newUser();
    const ids = ["a", "B", "_x", "é", "e"];
    const response = await fixture.send(
      userId,
      ids.map((id) => photo(id, DURING_100, AT_VENUE_1)),
    );
    const codePointOrder = [...ids].sort();
    expect(response.body.events[0].media.map((m: { media_id: string }) => m.media_id)).toEqual(
      codePointOrder,
    );
    const history = await fixture.server.call("GET", `/v1/users/${userId}/events`, { key: fixture.key });
    expect(history.body.events[0].media.map((m: { media_id: string }) => m.media_id)).toEqual(codePointOrder);
  });
});
