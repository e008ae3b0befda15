import { getPartner, issueKey, KEY_ID, type KeyRow, listKeys, revokeKey } from "../store/keys.ts";
import {
  CommandError,
  type CommandGroup,
  parseArguments,
  partnerIdArgument,
  table,
  textOption,
  UsageError,
} from "./command.ts";

/** `keys issue|list|revoke`: API keys are shown once at issue; only their hash is stored (docs/operations.md §4). */

const ENVIRONMENTS = ["production", "sandbox"] as const;

function isEnvironment(value: string | undefined): value is (typeof ENVIRONMENTS)[number] {
  return ENVIRONMENTS.some((e) => e === value);
}

function keyJson(key: KeyRow) {
  return {
    id: key.id,
    environment: key.environment,
    label: key.label,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

function unknownPartner(id: string): CommandError {
  return new CommandError(`no partner ${id} (create it with: bun run cli partners create ${id})`);
}

export const keys: CommandGroup = {
  name: "keys",
  subcommands: {
    issue: {
      usage: "<partner_id> --env production|sandbox [--label L]",
      summary: "issue a key; the last line of output is the key, shown this once",
      async run(args, context) {
        const { values, positionals } = parseArguments(
          args,
          { env: { type: "string" }, label: { type: "string" } },
          { min: 1, max: 1 },
        );
        const partnerId = partnerIdArgument(positionals[0]);
        if (values.env === undefined) throw new UsageError("--env is required: production or sandbox");
        if (!isEnvironment(values.env)) {
          throw new UsageError(`--env must be production or sandbox, got ${JSON.stringify(values.env)}`);
        }
        const environment = values.env;
        const label = textOption("label", values.label);
        const issued = await context.withStore(async (store) => {
          if ((await getPartner(store, partnerId)) === null) throw unknownPartner(partnerId);
          return issueKey(store, { partnerId, environment, label });
        });
        context.out(
          `Issued ${environment} key ${issued.row.id} for partner ${partnerId}${label ? ` (${label})` : ""}.`,
        );
        context.out("Store it now: it is shown only this once and cannot be recovered.");
        context.out(issued.key);
      },
    },
    list: {
      usage: "<partner_id> [--json]",
      summary: "list a partner's keys, never their secrets (--json for scripts)",
      async run(args, context) {
        const { values, positionals } = parseArguments(
          args,
          { json: { type: "boolean" } },
          { min: 1, max: 1 },
        );
        const partnerId = partnerIdArgument(positionals[0]);
        const rows = await context.withStore(async (store) => {
          if ((await getPartner(store, partnerId)) === null) throw unknownPartner(partnerId);
          return listKeys(store, partnerId);
        });
        if (values.json) {
          context.out(JSON.stringify(rows.map(keyJson), null, 2));
          return;
        }
        if (rows.length === 0) {
          context.out(`Partner ${partnerId} has no keys yet.`);
          return;
        }
        const header = ["ID", "ENVIRONMENT", "LABEL", "CREATED", "LAST USED", "REVOKED"];
        const cells = rows.map((k) => [
          k.id,
          k.environment,
          k.label ?? "",
          k.createdAt.toISOString(),
          k.lastUsedAt?.toISOString() ?? "never",
          k.revokedAt?.toISOString() ?? "active",
        ]);
        for (const line of table(header, cells)) context.out(line);
      },
    },
    revoke: {
      usage: "<key_id>",
      summary: "revoke a key (by the id keys list shows); every instance refuses it within 5 seconds",
      async run(args, context) {
        const { positionals } = parseArguments(args, {}, { min: 1, max: 1 });
        const keyId = positionals[0] ?? "";
        if (!KEY_ID.test(keyId)) {
          throw new UsageError(
            `key_id must be a key id as printed by keys list (a UUID), got ${JSON.stringify(keyId)}`,
          );
        }
        const revoked = await context.withStore((store) => revokeKey(store, keyId));
        if (!revoked) throw new CommandError(`no key ${keyId}`);
        context.out(`Revoked key ${keyId}.`);
      },
    },
  },
};
