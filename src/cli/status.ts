import { sql } from "drizzle-orm";
import { type BuildInfo, buildInfo } from "../observability/build.ts";
import type { Store } from "../store/db.ts";
import { type RunSql, type SchemaState, schemaState } from "../store/migrations.ts";
import {
  type CatalogSummary,
  catalogSummary,
  type PartnerSummary,
  partnerSummary,
} from "../store/serviceStatus.ts";
import { parseArguments, type Subcommand } from "./command.ts";

/** `migrate` and `status`: the schema and the state of the service as a whole (docs/operations.md §2). */

const runSqlOn =
  (store: Store): RunSql =>
  (text) =>
    store.rows(sql.raw(text));

const latest = (schema: SchemaState) => schema.applied.at(-1) ?? "none";

export const migrate: Subcommand = {
  usage: "",
  summary: "apply the pending schema migrations, naming each (a server applies them at start too)",
  async run(args, context) {
    parseArguments(args, {}, { min: 0, max: 0 });
    let applied = 0;
    const schema = await context.withStore((store) => schemaState(runSqlOn(store)), {
      onMigration: (name) => {
        applied++;
        context.out(`applied ${name}`);
      },
    });
    context.out(
      `schema up to date: ${schema.applied.length} migrations, latest ${latest(schema)} (${applied} applied now)`,
    );
  },
};

type Report = {
  build: BuildInfo;
  database: Store["kind"];
  schema: SchemaState;
  catalog: CatalogSummary | null;
  partners: PartnerSummary | null;
};

function reportJson({ build, database, schema, catalog, partners }: Report) {
  return {
    version: build.version,
    commit: build.commit,
    database,
    schema: {
      applied: schema.applied.length,
      latest: schema.applied.at(-1) ?? null,
      pending: schema.pending,
    },
    catalog:
      catalog === null
        ? null
        : {
            version: catalog.version,
            events: catalog.events,
            venues: catalog.venues,
            imported_at: catalog.importedAt?.toISOString() ?? null,
          },
    partners: partners === null ? null : { partners: partners.partners, active_keys: partners.activeKeys },
  };
}

function reportLines({ build, database, schema, catalog, partners }: Report): string[] {
  const schemaLine =
    schema.pending.length === 0
      ? `${schema.applied.length} migrations applied, latest ${latest(schema)}; none pending`
      : `${schema.applied.length} of ${schema.applied.length + schema.pending.length} migrations applied; ` +
        `pending: ${schema.pending.join(", ")} (bun run cli migrate applies them)`;
  const catalogLine =
    catalog === null
      ? "unknown until the schema is migrated"
      : catalog.importedAt === null
        ? "empty: nothing imported yet"
        : `version ${catalog.version}: ${catalog.events} events at ${catalog.venues} venues, ` +
          `imported ${catalog.importedAt.toISOString()}`;
  const keys = partners?.activeKeys;
  const partnersLine =
    partners === null || keys === undefined
      ? "unknown until the schema is migrated"
      : `${partners.partners}, with ${keys.production + keys.sandbox} active keys ` +
        `(${keys.production} production, ${keys.sandbox} sandbox)`;
  return [
    `version   ${build.version}${build.commit === null ? "" : `, commit ${build.commit}`}`,
    `database  ${database}`,
    `schema    ${schemaLine}`,
    `catalog   ${catalogLine}`,
    `partners  ${partnersLine}`,
  ];
}

export const status: Subcommand = {
  usage: "[--json]",
  summary: "the code's version, the schema (pending migrations), the catalog and partners; changes nothing",
  async run(args, context) {
    const { values } = parseArguments(args, { json: { type: "boolean" } }, { min: 0, max: 0 });
    const report = await context.withStore(
      async (store): Promise<Report> => {
        const schema = await schemaState(runSqlOn(store));
        // A database no migration ever ran on has none of the tables the rest reads.
        const migrated = schema.applied.length > 0;
        return {
          build: buildInfo(),
          database: store.kind,
          schema,
          catalog: migrated ? await catalogSummary(store) : null,
          partners: migrated ? await partnerSummary(store) : null,
        };
      },
      { migrate: false },
    );
    if (values.json) context.out(JSON.stringify(reportJson(report), null, 2));
    else for (const line of reportLines(report)) context.out(line);
  },
};
