// Org lookups on the request path, cached briefly: who may act in which org.
import type { Executor } from '../db/db.js';
import type { Clock, OrgRef } from '../shared/context.js';

export const ORG_SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/;

interface Entry { org: OrgRef | null; until: number }

/**
 * Membership answers are cached for `ttlMs` (the token cache's lifetime): a member removed from an
 * org keeps access on other nodes for at most that long.
 */
export class OrgDirectory {
  private readonly bySlug = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();
  private readonly homeAccounts = new Map<string, { accountId: string | null; until: number }>();

  constructor(private readonly db: Executor, private readonly clock: Clock, private readonly ttlMs: number) {}

  /** The live org named by `slug` if `userId` is a member; null otherwise. */
  forUserBySlug(userId: string, slug: string): Promise<OrgRef | null> {
    return this.cached(this.bySlug, `${userId}/${slug}`, 'o.slug = $2', [userId, slug]);
  }

  forUserById(userId: string, orgId: string): Promise<OrgRef | null> {
    return this.cached(this.byId, `${userId}/${orgId}`, 'o.id = $2', [userId, orgId]);
  }

  /** The account a user's org-less requests are charged to: the one they own, else their oldest membership's. */
  async homeAccountOf(userId: string): Promise<string | null> {
    const now = this.clock.now().getTime();
    const hit = this.homeAccounts.get(userId);
    if (hit && hit.until > now) return hit.accountId;
    const [row] = await this.db.query<{ id: string }>(
      `SELECT id FROM (
         SELECT a.id, 0 AS rank, a.created_at FROM accounts a WHERE a.owner_user_id = $1
         UNION ALL
         SELECT o.account_id, 1, m.created_at FROM memberships m JOIN orgs o ON o.id = m.org_id
          WHERE m.user_id = $1 AND o.deleted_at IS NULL) c
       ORDER BY rank, created_at LIMIT 1`, [userId]);
    const accountId = row?.id ?? null;
    if (this.homeAccounts.size > 10_000) this.homeAccounts.clear();
    this.homeAccounts.set(userId, { accountId, until: now + this.ttlMs });
    return accountId;
  }

  async slugExists(slug: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM orgs WHERE slug = $1 AND deleted_at IS NULL', [slug])).length > 0;
  }

  private async cached(map: Map<string, Entry>, key: string, where: string, params: unknown[]): Promise<OrgRef | null> {
    const now = this.clock.now().getTime();
    const hit = map.get(key);
    if (hit && hit.until > now) return hit.org;
    const [row] = await this.db.query<{ id: string; slug: string; account_id: string; role: 'Owner' | 'Member' }>(
      `SELECT o.id, o.slug, o.account_id, m.role FROM orgs o JOIN memberships m ON m.org_id = o.id
        WHERE m.user_id = $1 AND ${where} AND o.deleted_at IS NULL`, params);
    const org = row ? { id: row.id, slug: row.slug, accountId: row.account_id, role: row.role } : null;
    if (map.size > 10_000) map.clear();
    map.set(key, { org, until: now + this.ttlMs });
    return org;
  }
}
