import { fillPlaceholders, is, type Query, SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";

/*
 * Statements of the hot path rendered to text once, at module load, instead of on every call: a media
 * batch's statements are a few hundred template fragments, and turning them into text on every call is a
 * measurable part of a batch's server CPU (docs/performance.md §12). The text never depends on the
 * values (every value is a parameter), so only the parameters are worked out per call.
 */

const dialect = new PgDialect();

/** A statement's values as SQL fragments, one per named slot, for the statement's builder to place. */
export type Slots<Name extends string> = Readonly<Record<Name, SQL>>;

/** A statement with its values: the rendered text and parameters, or the same statement to build anew. */
export type BoundStatement = {
  readonly query: Query;
  /** The statement as a Drizzle SQL object, for the embedded database, which runs statements one by one. */
  statement(): SQL;
};

/** Whatever `inOneRoundTrip` runs: a statement built for this call, or a rendered one with its values. */
export type Runnable = SQL | BoundStatement;

export function isBound(runnable: Runnable): runnable is BoundStatement {
  return !is(runnable, SQL);
}

function slotsOf<Name extends string>(names: readonly Name[], fragment: (name: Name) => SQL): Slots<Name> {
  return Object.fromEntries(names.map((name) => [name, fragment(name)])) as Slots<Name>;
}

/**
 * Renders `build` once with a placeholder in every slot and returns a binder: given the values, it
 * fills the placeholders. Each slot is one parameter, an array included (Drizzle would spread a bare
 * array over several).
 */
export function renderedOnce<Name extends string>(
  names: readonly Name[],
  build: (slots: Slots<Name>) => SQL,
): (values: Readonly<Record<Name, unknown>>) => BoundStatement {
  const rendered = dialect.sqlToQuery(build(slotsOf(names, (name) => sql`${sql.placeholder(name)}`)));
  return (values) => ({
    query: { sql: rendered.sql, params: fillPlaceholders(rendered.params, values) },
    statement: () => build(slotsOf(names, (name) => sql`${sql.param(values[name])}`)),
  });
}

/** The text and parameters of a statement, rendering it when it was built for this call. */
export function queryOf(runnable: Runnable): Query {
  return isBound(runnable) ? runnable.query : dialect.sqlToQuery(runnable);
}

/** The statement as a Drizzle SQL object. */
export function statementOf(runnable: Runnable): SQL {
  return isBound(runnable) ? runnable.statement() : runnable;
}
