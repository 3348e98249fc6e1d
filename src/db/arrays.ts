// PostgreSQL array literals for batch statements (`unnest($1::uuid[], $2::float8[], ...)`). The
// drivers quote and escape every element through regular expressions, which on a hot path costs
// more than the statement itself; here elements that need no quoting (numbers, booleans, ids,
// words) are written bare and only the rest are quoted. Both stores' executors pass every flat
// array parameter through `literalParams`, so callers hand over plain arrays.

export type ArrayElement = string | number | boolean | null;

const BARE = /^[0-9A-Za-z_.:+-]+$/;

/** The literal of `values`, for a `$n::type[]` parameter. */
export function pgArray(values: readonly ArrayElement[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (i > 0) out += ',';
    if (value === null) out += 'NULL';
    else if (typeof value === 'number') out += String(value);
    else if (typeof value === 'boolean') out += value ? 't' : 'f';
    // An unquoted NULL (any case) is the null element.
    else out += BARE.test(value) && !(value.length === 4 && value.toLowerCase() === 'null') ? value : `"${value.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

/** A parameter array as sent: each flat array of scalars or Dates as its literal, anything else as given. */
export function literalParams(params: readonly unknown[] | undefined): unknown[] | undefined {
  if (!params) return undefined;
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const param = params[i];
    if (!Array.isArray(param)) continue;
    const literal = flatLiteral(param);
    if (literal === null) continue;
    out ??= params.slice();
    out[i] = literal;
  }
  return out ?? (params as unknown[]);
}

/** The literal of an array of scalars and Dates (undefined is NULL, as the drivers read it); null for anything else. */
function flatLiteral(values: readonly unknown[]): string | null {
  let elements: ArrayElement[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') continue;
    if (value !== undefined && !(value instanceof Date)) return null;
    elements ??= values.slice() as ArrayElement[];
    elements[i] = value === undefined ? null : value.toISOString();
  }
  return pgArray(elements ?? (values as readonly ArrayElement[]));
}
