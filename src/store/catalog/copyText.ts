/**
 * Encoding of rows in PostgreSQL's COPY text format: columns separated by tabs, rows by newlines,
 * `\N` for null, and backslash escapes for the four characters that would break that framing.
 */

export type CellValue = string | number | boolean | null | readonly (number | boolean | null)[];
export type Row = readonly CellValue[];

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

export function escapeText(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (c) => ESCAPES[c] ?? c) : value;
}

export function arrayElement(value: number | boolean | null): string {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "t" : "f";
  return String(value);
}

function cell(value: CellValue): string {
  if (value === null) return "\\N";
  if (typeof value === "string") return escapeText(value);
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "number") return String(value);
  // Arrays hold only numbers, booleans and nulls, none of which needs quoting inside `{...}`.
  return `{${value.map(arrayElement).join(",")}}`;
}

/** One row as a COPY text line, newline included. */
export function encodeCopyRow(row: Row): string {
  return `${row.map(cell).join("\t")}\n`;
}
