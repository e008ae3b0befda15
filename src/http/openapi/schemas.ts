import type { TSchema } from "@sinclair/typebox";
import { isNullReadAsAbsent, type JsonSchema, viewOf } from "./documentedAs.ts";

/** Keywords whose value is one schema, or a list or a map of schemas. */
const ONE_SCHEMA = new Set(["items", "not", "additionalProperties"]);
const SCHEMA_LIST = new Set(["anyOf", "allOf", "oneOf", "prefixItems"]);
const SCHEMA_MAP = new Set(["properties", "patternProperties"]);

const isSchema = (value: unknown): value is TSchema => typeof value === "object" && value !== null;

/** The strings of a union of string literals, or null: TypeBox writes one as `anyOf` of `const`s. */
function stringLiterals(variants: unknown[]): string[] | null {
  const literals = variants.map((variant) =>
    isSchema(variant) ? (variant as { const?: unknown }).const : null,
  );
  return literals.every((literal): literal is string => typeof literal === "string") ? literals : null;
}

/**
 * The route schemas as the OpenAPI document shows them. A schema with a `title` is a named component
 * (`Event`, `Venue`, `Error`, ...) that every use refers to, so a generated client has a type to name;
 * the checked schemas carry no `$ref`, since the framework and the compiled checks read them whole.
 */
export class DocumentSchemas {
  readonly components: Record<string, JsonSchema> = {};
  readonly #texts = new Map<string, string>();

  /** The document's schema for `schema`: a `$ref` when it is named, else the schema written out. */
  of(schema: TSchema): JsonSchema {
    const shown = this.#named(schema);
    if (!isNullReadAsAbsent(schema)) return shown;
    // The member's description and default stay on the member, where tools show them.
    const { description, default: fallback, ...value } = shown;
    return {
      ...(description === undefined ? {} : { description }),
      ...(fallback === undefined ? {} : { default: fallback }),
      anyOf: [value, { type: "null" }],
    };
  }

  #named(schema: TSchema): JsonSchema {
    const shown = viewOf(schema) ?? this.#written(schema);
    const title = schema.title;
    if (typeof title !== "string") return shown;
    const text = JSON.stringify(shown);
    const known = this.#texts.get(title);
    if (known === undefined) {
      this.#texts.set(title, text);
      this.components[title] = shown;
    } else if (known !== text) {
      throw new Error(`Two different schemas are titled ${title}`);
    }
    return { $ref: `#/components/schemas/${title}` };
  }

  /**
   * The schema's own keywords, its subschemas shown in turn. `additionalProperties: true`, which the
   * checked request schemas state so the framework leaves unknown members alone, is JSON Schema's
   * default: left out, so a generated client's types stay closed and catch a misspelt member. A union
   * of string literals is shown as the `enum` tools name a type after.
   */
  #written(schema: TSchema): JsonSchema {
    const shown: JsonSchema = {};
    for (const [keyword, value] of Object.entries(schema)) {
      if (keyword === "additionalProperties" && value === true) continue;
      const literals = keyword === "anyOf" && Array.isArray(value) ? stringLiterals(value) : null;
      if (literals !== null) Object.assign(shown, { type: "string", enum: literals });
      else if (ONE_SCHEMA.has(keyword) && isSchema(value)) shown[keyword] = this.of(value);
      else if (SCHEMA_LIST.has(keyword) && Array.isArray(value))
        shown[keyword] = value.map((s) => this.of(s));
      else if (SCHEMA_MAP.has(keyword) && isSchema(value)) {
        shown[keyword] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, this.of(s)]));
      } else shown[keyword] = value;
    }
    return shown;
  }
}
