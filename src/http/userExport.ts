import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { describeFailure, isCalledOff } from "../store/failures.ts";
import { currentScope } from "../store/requestScope.ts";
import type { UserAddress } from "../store/schema/index.ts";
import {
  type ExportedMediaRow,
  type ExportedUserRow,
  openUserExport,
  type UserExport,
} from "../store/userExport.ts";
import { ApiError } from "./errors.ts";
import { partnerOf } from "./gate.ts";
import { JSON_MEDIA_TYPE } from "./jsonResponse.ts";
import { userNotFound } from "./requireUser.ts";
import { route } from "./route.ts";
import { UserPath } from "./userPaths.ts";

const text = () => t.Union([t.String(), t.Null()]);
const ADDRESS_MEMBERS = ["line1", "line2", "city", "region", "postal_code", "country"] as const;

const ExportedUser = t.Object(
  {
    user_id: t.String({ format: "uuid" }),
    email: t.String(),
    partner_user_id: text(),
    first_name: text(),
    last_name: text(),
    phone_number: text(),
    address: t.Union([t.Record(t.String(), t.String()), t.Null()], { description: "The members sent" }),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "ExportedUser" },
);

const ExportedMedia = t.Object(
  {
    media_id: t.String(),
    taken_at: t.String({ format: "date-time", description: "UTC, with milliseconds like every answer" }),
    latitude: t.Number(),
    longitude: t.Number(),
    media_type: t.Union([t.Literal("photo"), t.Literal("video")]),
    filename: text(),
    duration_seconds: t.Union([t.Number(), t.Null()]),
    thumbnail_url: text(),
    device_make: text(),
    device_model: text(),
    device_lens_model: text(),
    event_id: Type.Integer(),
    venue_id: Type.Integer(),
  },
  { title: "ExportedMediaItem" },
);

const UserExportDocument = t.Object(
  {
    user: ExportedUser,
    sync: t.Object({
      has_synced: t.Boolean(),
      last_sync_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    }),
    media: t.Array(ExportedMedia, { description: "Every kept item, oldest taken_at first" }),
    hidden_event_ids: t.Array(Type.Integer()),
  },
  { title: "UserExport" },
);

function addressOf(address: UserAddress | null): Record<string, string> | null {
  if (address === null) return null;
  return Object.fromEntries(
    ADDRESS_MEMBERS.flatMap((name) => (address[name] === undefined ? [] : [[name, address[name]]])),
  );
}

function userOf(row: ExportedUserRow): typeof ExportedUser.static {
  return {
    user_id: row.user_id,
    email: row.email,
    partner_user_id: row.partner_user_id,
    first_name: row.first_name,
    last_name: row.last_name,
    phone_number: row.phone_number,
    address: addressOf(row.address),
    created_at: row.created_at,
  };
}

function mediaOf(row: ExportedMediaRow): typeof ExportedMedia.static {
  return {
    media_id: row.media_id,
    taken_at: row.taken_at,
    latitude: row.latitude,
    longitude: row.longitude,
    media_type: row.media_type,
    filename: row.filename,
    duration_seconds: row.duration_seconds,
    thumbnail_url: row.thumbnail_url,
    device_make: row.device_make,
    device_model: row.device_model,
    device_lens_model: row.device_lens_model,
    event_id: row.event_id,
    venue_id: row.venue_id,
  };
}

/**
 * How much of the document is written between two requests for a collection. Writing an item leaves
 * several times its size in garbage (the driver's row, the item's text, the page's text and bytes),
 * which the engine collects lazily: left to it, an export raises the server's peak resident memory as if
 * the document were held whole, and asking for a collection every few megabytes keeps it flat
 * (docs/performance.md §10). The request is asynchronous (`Bun.gc(false)`): a synchronous collection
 * stops the thread, and every request it serves, each time.
 */
const COLLECT_EVERY_BYTES = 4 * 2 ** 20;

/**
 * Ends a body short: the connection is cut, so the client cannot take it for a whole document. No reason
 * is given, since the runtime would print it to stderr, outside the JSON log that already says why.
 */
const abandon = (controller: ReadableStreamDefaultController<Uint8Array>) => controller.error();

/**
 * The document written a page of items at a time, each page read only when the client has taken the
 * one before (pull), so the server holds one page whatever the user's size. The export ends when the
 * last page is written, when the client goes away (cancel), on a failure, or when the request passes
 * its deadline (`ended`); the body then stops short of its closing `]}`: a document that does not
 * parse did not complete.
 */
function documentStream(
  exported: UserExport,
  finished: () => void,
  onFailure: (error: unknown) => void,
  ended: (stop: () => void) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const pages = exported.pages();
  const { user } = exported;
  let separator = "";
  let sinceCollection = 0;
  // Set when the request ends first: a page read then finds the body already cut, which is no failure.
  let stopped = false;
  const finish = async () => {
    try {
      await exported.close();
    } finally {
      finished();
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        ended(() => {
          stopped = true;
          try {
            abandon(controller);
          } catch {
            // Already closed: the document was complete.
          }
        });
        const sync = { has_synced: user.has_synced, last_sync_at: user.last_sync_at };
        const head = `{"user":${JSON.stringify(userOf(user))},"sync":${JSON.stringify(sync)},"media":[`;
        controller.enqueue(encoder.encode(head));
      },
      async pull(controller) {
        try {
          const next = await pages.next();
          if (next.done) {
            await finish();
            controller.enqueue(
              encoder.encode(`],"hidden_event_ids":${JSON.stringify(user.hidden_event_ids)}}`),
            );
            controller.close();
            return;
          }
          const items = next.value.map((row) => JSON.stringify(mediaOf(row))).join(",");
          const bytes = encoder.encode(separator + items);
          controller.enqueue(bytes);
          separator = ",";
          sinceCollection += bytes.byteLength;
          if (sinceCollection >= COLLECT_EVERY_BYTES) {
            sinceCollection = 0;
            Bun.gc(false);
          }
        } catch (error) {
          if (!stopped && !isCalledOff(error)) onFailure(error);
          await finish().catch(() => {});
          if (!stopped) abandon(controller);
        }
      },
      cancel: finish,
    },
    { highWaterMark: 1 },
  );
}

/** docs/api.md §16: one more export than the partner or this instance may run at once. */
const tooManyExports = (scope: string) =>
  new ApiError("rate_limited", `Too many exports are running ${scope}; retry later.`, null, {
    "retry-after": String(EXPORT_RETRY_AFTER_SECONDS),
  });

/** An export takes seconds, not minutes, unless its reader is slow: worth asking again this soon. */
const EXPORT_RETRY_AFTER_SECONDS = 5;

/** docs/api.md §16: everything stored for the user, streamed. */
export const userExportRoute = route({
  method: "GET",
  path: "/users/:user_id/export",
  policy: { auth: true, budget: "read" },
  schema: {
    params: UserPath,
    response: { 200: UserExportDocument },
    detail: {
      operationId: "exportUser",
      description:
        "Streamed; a body that does not end in ]} did not complete and should be fetched again (docs/api.md §16).",
      summary:
        "Everything stored for the user, streamed: profile, sync state, every kept item, hidden events",
      tags: ["users"],
    },
  },
  handle:
    ({ store, log, config, exportSlots }) =>
    async ({ request, params }) => {
      const { partnerId } = partnerOf(request);
      const slot = exportSlots.take();
      if (slot === null) throw tooManyExports("on this instance");
      let exported: Awaited<ReturnType<typeof openUserExport>>;
      try {
        exported = await openUserExport(store, partnerId, params.user_id);
      } catch (error) {
        slot();
        throw error;
      }
      if (exported === "no_such_user" || exported === "partner_busy") {
        slot();
        throw exported === "no_such_user" ? userNotFound() : tooManyExports("for this partner");
      }
      // The document streams past the answer's headers: the request holds its snapshot until it ends.
      const scope = currentScope();
      scope?.extendDeadline(config.exportDeadlineSeconds * 1000);
      scope?.onSettled(slot);
      const stream = documentStream(
        exported,
        slot,
        (error) => log("export_failed", { route: "/v1/users/:user_id/export", ...describeFailure(error) }),
        (stop) => scope?.onAbort(stop),
      );
      return new Response(stream, { headers: { "content-type": JSON_MEDIA_TYPE } });
    },
});
