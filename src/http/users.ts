import { Elysia, t } from "elysia";
import { type CreatedUser, createUser, type NewUser } from "../store/users.ts";
import type { AppDeps } from "./app.ts";
import { ApiError, errorResponses } from "./errors.ts";
import { EMAIL_ADDRESS_FORMAT, limitedString } from "./formats.ts";
import { partnerOf } from "./gate.ts";
import { JSON_BODY } from "./userPaths.ts";
import { invalidRequest, openObject, type ValidationTranslator } from "./validation.ts";

/** An optional member: absent and null both mean "not given". */
const optionalText = (maxCharacters: number) => t.Optional(t.Union([limitedString(maxCharacters), t.Null()]));

const Address = t.Object({
  line1: optionalText(200),
  line2: optionalText(200),
  city: optionalText(200),
  region: optionalText(200),
  postal_code: optionalText(200),
  country: optionalText(200),
});

const CreateUserBody = openObject({
  email: t.String({
    format: EMAIL_ADDRESS_FORMAT,
    description: "local@domain.tld, at most 254 characters once trimmed; the idempotency key, any case",
  }),
  partner_user_id: optionalText(255),
  first_name: optionalText(200),
  last_name: optionalText(200),
  phone_number: optionalText(32),
  address: t.Optional(t.Union([Address, t.Null()])),
});
type CreateUserBody = typeof CreateUserBody.static;

const UserCreated = t.Object({
  user_id: t.String({ format: "uuid" }),
  existing: t.Boolean(),
  created_at: t.String({ format: "date-time" }),
});

/**
 * docs/api.md §3: any problem with the email, whatever else is wrong, is invalid_email; a body that is not
 * an object at all is invalid_request.
 */
export const userValidation: Record<string, ValidationTranslator> = {
  "POST /v1/users": (issues, location) =>
    issues.some((issue) => issue.path[0] === "email") && !issues.some((issue) => issue.path.length === 0)
      ? new ApiError(
          "invalid_email",
          "email is required and must look like local@domain.tld (at most 254 characters).",
        )
      : invalidRequest(issues, location),
};

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

function newUserOf(body: CreateUserBody): NewUser {
  const phone = body.phone_number?.trim();
  return {
    email: body.email.trim(),
    partnerUserId: orNull(body.partner_user_id),
    firstName: orNull(body.first_name),
    lastName: orNull(body.last_name),
    // A blank phone is no phone: storing "" would make it "taken" for the partner's next user.
    phoneNumber: phone ? phone : null,
    address: addressOf(body.address),
  };
}

function userCreatedOf(user: CreatedUser): typeof UserCreated.static {
  return { user_id: user.id, existing: !user.created, created_at: user.createdAt.toISOString() };
}

export function usersResource({ store }: AppDeps) {
  return new Elysia({ name: "users" }).post(
    "/users",
    async ({ request, body, status }) => {
      const { partnerId } = partnerOf(request);
      const user = await createUser(store, partnerId, newUserOf(body));
      return status(user.created ? 201 : 200, userCreatedOf(user));
    },
    {
      parse: JSON_BODY,
      body: CreateUserBody,
      response: {
        200: UserCreated,
        201: UserCreated,
        ...errorResponses(400, 401, 405, 408, 413, 415, 429, 500),
      },
      detail: {
        summary: "Create a user, or return the partner's user with this email (201 created, 200 existing)",
        tags: ["users"],
      },
    },
  );
}
