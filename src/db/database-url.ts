// `database_url` checked and tried once at boot, so a wrong one stops `serve` and `migrate` with one
// line naming it and the reason, instead of a stack from the first migration.
import { openPostgres, type Db } from './db.js';

/** A `database_url` that names no usable PostgreSQL server; the message never holds the password. */
export class DatabaseUrlError extends Error {
  constructor(reason: string, cause?: unknown) {
    super(`DATABASE_URL: ${reason}`, { cause });
    this.name = 'DatabaseUrlError';
  }
}

const SOCKET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused', ENOTFOUND: 'no such host', EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out', EHOSTUNREACH: 'host unreachable', ENETUNREACH: 'network unreachable', ECONNRESET: 'connection reset',
};

/** Opens the pool and connects once. `pg` reads a string that is no URL as a host of its own guessing (`notaurl` dials `base`), so the URL is checked first. */
export async function connectPostgres(url: string): Promise<Db> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError('not a URL; expected postgres://user:password@host:port/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(`expected a postgres:// URL, not ${parsed.protocol}//`);
  }
  const db = openPostgres(url);
  try {
    await db.query('SELECT 1');
    return db;
  } catch (err) {
    await db.close();
    const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
    throw new DatabaseUrlError(`cannot connect to PostgreSQL at ${host}:${parsed.port || 5432}: ${connectReason(err, parsed.password)}`, err);
  }
}

/** Socket errors in words, server refusals (auth, missing database) as the server words them; with the code. */
function connectReason(err: unknown, password: string): string {
  const { code, message } = err as { code?: string; message?: string };
  // A socket error from a dual-stack lookup (AggregateError) has no message of its own, only a code.
  let reason = (code && SOCKET_REASONS[code]) || message || String(err);
  for (const secret of password ? [password, safeDecode(password)] : []) reason = reason.replaceAll(secret, '***');
  return code ? `${reason} (${code})` : reason;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
