// API tokens (service-api.md, "API token auth"): `sm_live_` + 32 random bytes, stored as an argon2id
// hash plus the first 16 characters for lookup, shown once.
import { hash, verify } from '@node-rs/argon2';
import type { Db, Executor } from '../db/db.js';
import { AppError, quotaExceeded } from '../shared/errors.js';
import { writeAudit } from '../shared/audit.js';
import { newId, randomToken, sha256 } from '../shared/ids.js';
import type { Actor, Clock } from '../shared/context.js';

export const TOKEN_PREFIX = 'sm_live_';
const TOKEN_RE = /^sm_live_[A-Za-z0-9_-]{43}$/;
export const LOOKUP_PREFIX_LENGTH = 16;
const LAST_USED_DEBOUNCE_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;

export interface TokenRow {
  id: string;
  user_id: string;
  org_id: string | null;
  name: string;
  prefix: string;
  token_hash: string;
  scopes: string[];
  audience: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export interface TokenPrincipal {
  tokenId: string;
  userId: string;
  boundOrgId: string | null;
  scopes: ReadonlySet<string>;
  audience: string | null;
  expiresAt: Date | null;
}

export interface NewToken {
  userId: string;
  name: string;
  scopes: string[];
  orgId: string | null;
  expiresInDays: number | null;
  audience?: string | null;
  /** `max_api_tokens_per_user` of the user's plan; null is unlimited. */
  limit: number | null;
  /** The account whose plan sets `limit` (the user's home account), named in a refusal's `quota_events` row. */
  limitAccountId?: string | null;
  /** Who mints it, for the `api_token.created` audit row that commits with the token. */
  actor: Actor;
}

export interface MintedToken { row: TokenRow; token: string }

/** Mints a token and its audit row; the per-user cap is counted inside the insert under a per-user lock. */
export async function createApiToken(db: Db, clock: Clock, input: NewToken): Promise<MintedToken> {
  const token = TOKEN_PREFIX + randomToken(32);
  const tokenHash = await hash(token);
  const expiresAt = input.expiresInDays ? new Date(clock.now().getTime() + input.expiresInDays * 86_400_000) : null;
  const row = await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [input.userId]);
    const rows = await tx.query<TokenRow>(
      `INSERT INTO api_tokens (id, user_id, org_id, name, prefix, token_hash, scopes, audience, expires_at, created_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
       WHERE $11::integer IS NULL OR (SELECT count(*) FROM api_tokens
         WHERE user_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $10)) < $11::integer
       RETURNING *`,
      [newId(), input.userId, input.orgId, input.name, token.slice(0, LOOKUP_PREFIX_LENGTH), tokenHash, input.scopes,
        input.audience ?? null, expiresAt, clock.now(), input.limit],
    );
    if (!rows[0]) {
      const refused = quotaExceeded('max_api_tokens_per_user', input.limit);
      // The caller may be the operator, not the user: the row names whose cap it was.
      Object.assign(refused.extra.rejection!, { userId: input.userId, ...(input.limitAccountId && { accountId: input.limitAccountId }) });
      throw refused;
    }
    await writeAudit(tx, input.actor, {
      action: 'api_token.created', orgId: input.orgId, entityType: 'api_token', entityId: rows[0].id, details: { user_id: input.userId },
    });
    return rows[0];
  });
  return { row, token };
}

export async function countLiveTokens(db: Executor, userId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)',
    [userId, now]);
  return row?.n ?? 0;
}

export type TokenFailure = 'malformed_token' | 'invalid_token' | 'token_expired';

export class TokenAuthError extends AppError {
  constructor(readonly reason: TokenFailure, readonly tokenId?: string, readonly userId?: string) {
    super(401, 'UNAUTHENTICATED', reason === 'token_expired' ? 'the API token has expired' : 'the API token is not valid');
  }
}

/**
 * Verifies bearer tokens. argon2id costs tens of milliseconds by design, so a verified token is
 * remembered for `ttlMs`, keyed by a SHA-256 of the whole token (never by its prefix alone).
 * A token revoked in the store stays usable for at most `ttlMs` on a node that had it cached.
 * Once the time is up the token's row is read again; argon2 runs again only when the row's hash is
 * not the one this token was verified against. Concurrent requests with the same token share one
 * check, so a busy token's lapse costs one query rather than one argon2 run per request in flight.
 */
export class TokenVerifier {
  private readonly cache = new Map<string, { principal: TokenPrincipal; tokenHash: string; until: number }>();
  private readonly checking = new Map<string, Promise<TokenPrincipal>>();
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly touches = new Set<Promise<void>>();
  /** argon2 verifications run so far (bench:auth, tests). */
  argon2Runs = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly onTouchError?: (err: unknown) => void,
  ) {}

  /**
   * Returns the principal and whether this call checked the token against the store (`fresh`: the
   * one call that ran a shared check), not served it from the cache.
   */
  async verify(raw: string): Promise<{ principal: TokenPrincipal; fresh: boolean }> {
    if (!TOKEN_RE.test(raw)) throw new TokenAuthError('malformed_token');
    const now = this.clock.now().getTime();
    const key = sha256(raw);
    const cached = this.cache.get(key);
    if (cached && cached.until > now) {
      this.checkExpiry(cached.principal, now);
      return { principal: cached.principal, fresh: false };
    }
    const shared = this.checking.get(key);
    if (shared) {
      const principal = await shared;
      this.checkExpiry(principal, now);
      return { principal, fresh: false };
    }
    const check = this.checkInStore(key, raw, cached?.tokenHash).finally(() => this.checking.delete(key));
    this.checking.set(key, check);
    const principal = await check;
    this.checkExpiry(principal, now);
    return { principal, fresh: true };
  }

  /**
   * `last_used_at` moves at most once a minute per token: this node skips the write within the
   * window, and the UPDATE's own condition holds the window across nodes. Never awaited on the
   * request path; `settled()` waits for the writes in flight.
   */
  touch(tokenId: string): Promise<void> {
    const now = this.clock.now();
    const last = this.lastUsedWrites.get(tokenId) ?? 0;
    if (now.getTime() - last < LAST_USED_DEBOUNCE_MS) return Promise.resolve();
    if (this.lastUsedWrites.size >= CACHE_MAX_ENTRIES) this.lastUsedWrites.clear();
    this.lastUsedWrites.set(tokenId, now.getTime());
    // Returns the stored time whether or not this write applied, so a node that lost the race to
    // another node debounces from the other node's write rather than from its own attempt.
    const write = this.db.query<{ at: Date | null }>(
      `WITH current AS (SELECT last_used_at FROM api_tokens WHERE id = $1),
            moved AS (UPDATE api_tokens SET last_used_at = $2
              WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '60 seconds')
              RETURNING last_used_at)
       SELECT COALESCE((SELECT last_used_at FROM moved), (SELECT last_used_at FROM current)) AS at`,
      [tokenId, now],
    ).then(([row]) => {
      if (row?.at) this.lastUsedWrites.set(tokenId, row.at.getTime());
    }, (err: unknown) => {
      // A failed write is retried on the next use rather than failing a request that already passed.
      this.lastUsedWrites.delete(tokenId);
      this.onTouchError?.(err);
    }).finally(() => this.touches.delete(write));
    this.touches.add(write);
    return write;
  }

  /** Resolves when every `last_used_at` write started so far has finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.touches]);
  }

  /** Reads the token's row and, unless its hash is `verifiedHash`, runs argon2; caches what it finds. */
  private async checkInStore(key: string, raw: string, verifiedHash: string | undefined): Promise<TokenPrincipal> {
    const [row] = await this.db.query<TokenRow>(
      'SELECT * FROM api_tokens WHERE prefix = $1', [raw.slice(0, LOOKUP_PREFIX_LENGTH)]);
    if (!row) throw new TokenAuthError('invalid_token');
    if (row.token_hash !== verifiedHash) {
      this.argon2Runs++;
      if (!(await verify(row.token_hash, raw))) throw new TokenAuthError('invalid_token');
    }
    if (row.revoked_at) throw new TokenAuthError('invalid_token', row.id, row.user_id);
    const principal: TokenPrincipal = {
      tokenId: row.id,
      userId: row.user_id,
      boundOrgId: row.org_id,
      scopes: new Set(row.scopes),
      audience: row.audience,
      expiresAt: row.expires_at,
    };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { principal, tokenHash: row.token_hash, until: this.clock.now().getTime() + this.ttlMs });
    return principal;
  }

  private checkExpiry(p: TokenPrincipal, now: number): void {
    if (p.expiresAt && p.expiresAt.getTime() <= now) throw new TokenAuthError('token_expired', p.tokenId, p.userId);
  }
}
