// PostgreSQL array literals for batch statements (`unnest($1::uuid[], $2::float8[], ...)`). The
// drivers quote and escape every element through regular expressions, which on a hot path costs
// more than the statement itself; here elements that need no quoting (numbers, booleans, ids,
// words) are written bare and only the rest are quoted.

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
    else out += BARE.test(value) && value.toLowerCase() !== 'null' ? value : `"${value.replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}
