import { t } from "elysia";
import { fitsCharacters, isUnstorableString } from "../store/text.ts";
import { type CreatedUser, createUser, type NewUser } from "../store/users.ts";
import { ApiError } from "./errors.ts";
import { EMAIL_ADDRESS_FORMAT, limitedString } from "./formats.ts";
import { partnerOf } from "./gate.ts";
import { documentedAs } from "./openapi/documentedAs.ts";
import { route } from "./route.ts";
import { JSON_BODY } from "./userPaths.ts";
import { invalidRequest, openObject, type ValidationTranslator } from "./validation.ts";

/** An optional member: absent and null both mean "not given". */
const optionalText = (maxCharacters: number) => t.Optional(t.Union([limitedString(maxCharacters), t.Null()]));

const Address = t.Object(
  {
    line1: optionalText(200),
    line2: optionalText(200),
    city: optionalText(200),
    region: optionalText(200),
    postal_code: optionalText(200),
    country: optionalText(200),
  },
  { title: "Address" },
);

const CreateUserBody = openObject(
  {
    email: documentedAs(t.String({ format: EMAIL_ADDRESS_FORMAT }), {
      type: "string",
      description: "local@domain.tld, at most 254 characters once trimmed; the idempotency key, any case",
    }),
    partner_user_id: optionalText(255),
    first_name: optionalText(200),
    last_name: optionalText(200),
    // Any JSON value: docs/api.md §3, a phone number never makes the call fail (see `phoneOf`). The
    // document names no type either, so a validating proxy lets through what the service accepts.
    phone_number: t.Optional(
      documentedAs(t.Unknown(), {
        description:
          "Any JSON value: a string of at most 32 characters once trimmed is stored; anything else (null, another type, longer, taken) is not stored, and the call still succeeds",
      }),
    ),
    address: t.Optional(t.Union([Address, t.Null()])),
  },
  { title: "NewUser" },
);
type CreateUserBody = typeof CreateUserBody.static;

const UserCreated = t.Object(
  {
    user_id: t.String({ format: "uuid" }),
    existing: t.Boolean(),
    created_at: t.String({ format: "date-time" }),
  },
  { title: "UserCreated" },
);

/**
 * docs/api.md §3: any problem with the email, whatever else is wrong, is invalid_email; a body that is not
 * an object at all is invalid_request.
 */
const translateUserIssues: ValidationTranslator = (issues, location) =>
  issues.some((issue) => issue.path[0] === "email") && !issues.some((issue) => issue.path.length === 0)
    ? new ApiError(
        "invalid_email",
        "email is required and must look like local@domain.tld (at most 254 characters).",
      )
    : invalidRequest(issues, location);

const orNull = (value: string | null | undefined): string | null => value ?? null;

/** Address members that were given; null when none was. Only known members are copied: unknown ones stay behind. */
function addressOf(address: CreateUserBody["address"]): NewUser["address"] {
  if (!address) return null;
  const given = Object.entries({
    line1: address.line1,
    line2: address.line2,
    city: address.city,
    region: address.region,
    postal_code: address.postal_code,
    country: address.country,
  }).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return given.length === 0 ? null : Object.fromEntries(given);
}

const MAX_PHONE_CHARACTERS = 32;

/**
 * The phone number to store, or null. docs/api.md §3: a phone that is not a string, over 32 characters
 * once trimmed (judged as stored) or one PostgreSQL cannot store is dropped, not refused. A blank phone
 * is no phone: storing "" would make it "taken" for the partner's next user.
 */
function phoneOf(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const phone = value.trim();
  if (phone === "" || !fitsCharacters(phone, MAX_PHONE_CHARACTERS) || isUnstorableString(phone)) return null;
  return phone;
}

function newUserOf(body: CreateUserBody): NewUser {
  return {
    email: body.email.trim(),
    partnerUserId: orNull(body.partner_user_id),
    firstName: orNull(body.first_name),
    lastName: orNull(body.last_name),
    phoneNumber: phoneOf(body.phone_number),
    address: addressOf(body.address),
  };
}

function userCreatedOf(user: CreatedUser): typeof UserCreated.static {
  return { user_id: user.id, existing: !user.created, created_at: user.createdAt.toISOString() };
}

export const createUserRoute = route({
  method: "POST",
  path: "/users",
  policy: { auth: true, budget: "write", dropsMalformed: ["phone_number"] },
  translate: translateUserIssues,
  errors: ["invalid_email"],
  schema: {
    parse: JSON_BODY,
    body: CreateUserBody,
    response: { 200: UserCreated, 201: UserCreated },
    detail: {
      operationId: "createUser",
      description:
        "Idempotent on the email within the partner: a retry gives the same user_id with existing true (docs/api.md §3).",
      answers: { 200: "The partner's existing user with this email", 201: "A new user" },
      summary: "Create a user, or return the partner's user with this email (201 created, 200 existing)",
      tags: ["users"],
    },
  },
  handle:
    ({ store }) =>
    async ({ request, body, status }) => {
      const { partnerId } = partnerOf(request);
      const user = await createUser(store, partnerId, newUserOf(body));
      return status(user.created ? 201 : 200, userCreatedOf(user));
    },
});
