// `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header): a retried POST with the same
// key and the same request answers what the first one answered, without doing it twice. The key
// row is written first in the operation's transaction, so a concurrent twin waits on it and then
// replays; a failed operation rolls its key back and may be retried.
import type { FastifyRequest } from 'fastify';
import type { Db, Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { sha256 } from '../shared/ids.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

export interface Replayed<T> { status: number; body: T; replayed: boolean }

/** The key of a request, or null without one; a malformed key is 400 naming the header. */
export function idempotencyKeyOf(request: Pick<FastifyRequest, 'headers'>): string | null {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !KEY_RE.test(raw)) {
    throw new AppError(400, 'VALIDATION_FAILED', 'Idempotency-Key: 1-255 visible ASCII characters', { field: 'Idempotency-Key' });
  }
  return raw;
}

interface StoredAnswer<T> { request_hash: string; status: number | null; response: T }

/** JSON with every object's keys sorted: a retry that orders its keys otherwise is the same request. */
export const canonicalJson = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) =>
  (v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));

const reusedKey = () => new AppError(409, 'CONFLICT', 'this Idempotency-Key was used with a different request', { field: 'Idempotency-Key' });

/**
 * Runs `operation` in a transaction once per (org, key): a replay answers the stored status and
 * body. The same key with a different method, path or body is 409 `CONFLICT`. `prepare` runs
 * before the transaction (checks that may wait on the network must not hold it open) and is
 * skipped for a replay of a finished request.
 */
export async function idempotent<P, T>(
  db: Db, clock: Clock,
  scope: { orgId: string; key: string | null; request: { method: string; url: string; body: unknown } },
  prepare: () => Promise<P>,
  operation: (tx: Executor, prepared: P) => Promise<{ status: number; body: T }>,
): Promise<Replayed<T>> {
  if (scope.key === null) {
    const prepared = await prepare();
    return { ...(await db.transaction((tx) => operation(tx, prepared))), replayed: false };
  }
  const { orgId, key, request } = scope;
  const requestHash = sha256(`${request.method} ${request.url}\n${canonicalJson(request.body)}`);
  const replay = (stored: StoredAnswer<T> | undefined): Replayed<T> | null => {
    if (!stored || stored.status === null) return null;
    if (stored.request_hash !== requestHash) throw reusedKey();
    return { status: stored.status, body: stored.response, replayed: true };
  };
  const fresh = (at: Date) => new Date(at.getTime() - IDEMPOTENCY_TTL_MS);
  const read = async (ex: Executor) => (await ex.query<StoredAnswer<T>>(
    'SELECT request_hash, status, response FROM idempotency_keys WHERE org_id = $1 AND key = $2 AND created_at >= $3',
    [orgId, key, fresh(clock.now())]))[0];

  const early = replay(await read(db));
  if (early) return early;
  const prepared = await prepare();
  return db.transaction(async (tx) => {
    const now = clock.now();
    // A twin holding the key makes this wait until it commits (then replays) or rolls back (then claims).
    const claimed = await tx.query(
      `INSERT INTO idempotency_keys (org_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (org_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = NULL, response = NULL, created_at = excluded.created_at
         WHERE idempotency_keys.created_at < $5
       RETURNING key`, [orgId, key, requestHash, now, fresh(now)]);
    if (!claimed.length) {
      const again = replay(await read(tx));
      if (!again) throw reusedKey();
      return again;
    }
    const result = await operation(tx, prepared);
    await tx.query('UPDATE idempotency_keys SET status = $3, response = $4 WHERE org_id = $1 AND key = $2',
      [orgId, key, result.status, JSON.stringify(result.body)]);
    return { ...result, replayed: false };
  });
}
