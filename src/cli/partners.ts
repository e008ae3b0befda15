import { createPartner, listPartners, PartnerExistsError } from "../store/keys.ts";
import {
  CommandError,
  type CommandGroup,
  parseArguments,
  partnerIdArgument,
  table,
  textOption,
} from "./command.ts";
import { partnerLimits } from "./partnerLimits.ts";

/** `partners create|list|limits`: the organisations that hold API keys. */

function limit(value: number | null): string {
  return value === null ? "default" : String(value);
}

export const partners: CommandGroup = {
  name: "partners",
  subcommands: {
    create: {
      usage: "<partner_id> [--name NAME]",
      summary: "create a partner; its id prefixes every key it is issued",
      async run(args, context) {
        const { values, positionals } = parseArguments(
          args,
          { name: { type: "string" } },
          { min: 1, max: 1 },
        );
        const id = partnerIdArgument(positionals[0]);
        const name = textOption("name", values.name) ?? id;
        const partner = await context.withStore(async (store) => {
          try {
            return await createPartner(store, { id, name });
          } catch (error) {
            if (error instanceof PartnerExistsError) throw new CommandError(`partner ${id} already exists`);
            throw error;
          }
        });
        context.out(`Created partner ${partner.id} (${partner.name}).`);
        context.out(`Issue its keys with: bun run cli keys issue ${partner.id} --env sandbox`);
      },
    },
    list: {
      usage: "[--json]",
      summary: "list partners (--json for scripts)",
      async run(args, context) {
        const { values } = parseArguments(args, { json: { type: "boolean" } }, { min: 0, max: 0 });
        const rows = await context.withStore((store) => listPartners(store));
        if (values.json) {
          const json = rows.map((p) => ({
            id: p.id,
            name: p.name,
            created_at: p.createdAt.toISOString(),
            ingest_limit: p.ingestLimit,
            read_limit: p.readLimit,
            write_limit: p.writeLimit,
          }));
          context.out(JSON.stringify(json, null, 2));
          return;
        }
        if (rows.length === 0) {
          context.out("No partners yet. Create one with: bun run cli partners create <partner_id>");
          return;
        }
        const header = ["ID", "NAME", "CREATED", "INGEST LIMIT", "READ LIMIT", "WRITE LIMIT"];
        const cells = rows.map((p) => [
          p.id,
          p.name,
          p.createdAt.toISOString(),
          limit(p.ingestLimit),
          limit(p.readLimit),
          limit(p.writeLimit),
        ]);
        for (const line of table(header, cells)) context.out(line);
      },
    },
    limits: partnerLimits,
  },
};
