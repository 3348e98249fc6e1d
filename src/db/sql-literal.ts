// Parameters written into SQL text as literals, for `EXECUTE name(...)` on the embedded store, whose
// only way to run a named prepared statement is a statement of its own (its driver parses every
// query afresh). Each value becomes a quoted literal of unknown type, which PostgreSQL coerces to the
// prepared parameter's type exactly as it would a bound text parameter.

/** Standard SQL quoting: with `standard_conforming_strings` on, a doubled quote is the only escape. */
function quote(text: string): string {
  // PostgreSQL text cannot hold NUL (a bound parameter is refused the same way); in SQL text it would end the statement.
  if (text.includes('\0')) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
  return `'${text.replaceAll("'", "''")}'`;
}

/** The literal of one parameter as a driver would send it (Dates as ISO text, objects as JSON, bytes as hex). */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return quote(String(value));
  if (value instanceof Date) return quote(value.toISOString());
  if (value instanceof Uint8Array) return quote(`\\x${Buffer.from(value).toString('hex')}`);
  // Flat arrays arrive as literals (`literalParams`); any other would be a PostgreSQL array to the
  // `pg` driver and JSON here, so it is refused rather than read two ways.
  if (Array.isArray(value)) throw new Error('a prepared statement takes arrays of scalars only');
  return quote(JSON.stringify(value));
}

/** `EXECUTE name(p1, p2, ...)`. */
export const executeStatement = (name: string, params: readonly unknown[]): string =>
  params.length ? `EXECUTE ${name}(${params.map(sqlLiteral).join(', ')})` : `EXECUTE ${name}`;
