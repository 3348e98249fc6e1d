// `database_url` checked and tried once at boot, so a wrong one stops `serve` and `migrate` with one
// line naming it and the reason, instead of a stack from the first migration.
import pg from 'pg';
import { Refusal } from '../shared/refusal.js';
import { CONNECT_DEADLINE_MS, openPostgres, type Db } from './db.js';

/** How long a connect waits for the server, at boot and after, unless the URL sets `connect_timeout`. */
export const CONNECT_TIMEOUT_SECS = CONNECT_DEADLINE_MS / 1000;

/**
 * A `database_url` that names no usable PostgreSQL server; the message names where the URL was set
 * (`DATABASE_URL`, `database_url in ./keepwatch.toml`) and never holds the password.
 */
export class DatabaseUrlError extends Refusal {
  constructor(source: string, reason: string, cause?: unknown) {
    super(`${source}: ${reason}`, { cause });
    this.name = 'DatabaseUrlError';
  }
}

const SOCKET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused', ENOTFOUND: 'no such host', EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out', EHOSTUNREACH: 'host unreachable', ENETUNREACH: 'network unreachable', ECONNRESET: 'connection reset',
};

/** Connects once, with a deadline, then opens the pool. `pg` reads a string that is no URL as a host of its own guessing (`notaurl` dials `base`), so the URL is checked first. */
export async function connectPostgres(url: string, source = 'database_url'): Promise<Db> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError(source, 'not a URL; expected postgres://user:password@host:port/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(source, `expected a postgres:// URL, not ${parsed.protocol}//`);
  }
  const timeoutSecs = connectTimeoutOf(parsed, source);
  // One client with a deadline: a host that drops packets would otherwise hold the boot for the
  // OS's TCP timeout (minutes), silent.
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutSecs * 1000 });
  try {
    await probe.connect();
  } catch (err) {
    const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
    const reason = isConnectTimeout(err) ? `no answer within ${timeoutSecs} s (connect_timeout)` : connectReason(err, parsed.password);
    throw new DatabaseUrlError(source, `cannot connect to PostgreSQL at ${host}:${parsed.port || 5432}: ${reason}`, err);
  } finally {
    await probe.end().catch(() => {});
  }
  return openPostgres(url, { connectDeadlineMs: timeoutSecs * 1000 });
}

/** The URL's `connect_timeout`, in whole seconds as libpq reads it, else CONNECT_TIMEOUT_SECS. */
function connectTimeoutOf(url: URL, source: string): number {
  const given = url.searchParams.get('connect_timeout');
  if (given === null) return CONNECT_TIMEOUT_SECS;
  if (!/^[1-9][0-9]{0,4}$/.test(given)) throw new DatabaseUrlError(source, `connect_timeout: expected whole seconds from 1 to 99999, got ${JSON.stringify(given)}`);
  return Number(given);
}

/** `pg` ends a connect that outlived `connectionTimeoutMillis` with one of these messages, and no code. */
const isConnectTimeout = (err: unknown): boolean => /^timeout expired$|connection timeout/i.test((err as Error | undefined)?.message ?? '');

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
