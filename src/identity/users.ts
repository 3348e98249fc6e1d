// Users, their accounts and orgs: the records the operator bootstrap and `/api/v1/me` read and write.
import type { Executor } from '../db/db.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';

export interface UserRow { id: string; email: string; email_verified_at: Date | null; created_at: Date }

export interface Membership { org_id: string; slug: string; name: string; role: 'Owner' | 'Member'; account_id: string }

export async function getUser(db: Executor, userId: string): Promise<UserRow | null> {
  const [row] = await db.query<UserRow>('SELECT * FROM users WHERE id = $1 AND deleted_at IS NULL', [userId]);
  return row ?? null;
}

export async function membershipsOf(db: Executor, userId: string): Promise<Membership[]> {
  return db.query<Membership>(
    `SELECT o.id AS org_id, o.slug, o.name, m.role, o.account_id FROM memberships m JOIN orgs o ON o.id = m.org_id
      WHERE m.user_id = $1 AND o.deleted_at IS NULL ORDER BY m.created_at, o.id`, [userId]);
}

export interface NewOwner { email: string; planId: string; orgName: string; verified: boolean }
export interface CreatedOwner { user_id: string; account_id: string; org_id: string; org_slug: string }

/** A user who owns a new account and a first org (operator bootstrap, sign-up). */
export async function createOwner(tx: Executor, input: NewOwner): Promise<CreatedOwner> {
  const userId = newId();
  const accountId = newId();
  const orgId = newId();
  const users = await tx.query(
    `INSERT INTO users (id, email, email_verified_at) VALUES ($1, $2, CASE WHEN $3 THEN now() END)
     ON CONFLICT DO NOTHING RETURNING id`, [userId, input.email, input.verified]);
  if (!users.length) throw new AppError(409, 'USER_EXISTS', `a user with email ${input.email} exists`, { field: 'email' });
  await tx.query('INSERT INTO accounts (id, owner_user_id, plan_id) VALUES ($1, $2, $3)', [accountId, userId, input.planId]);
  const slug = await insertOrgWithFreeSlug(tx, { id: orgId, accountId, name: input.orgName });
  await tx.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Owner')`, [orgId, userId]);
  return { user_id: userId, account_id: accountId, org_id: orgId, org_slug: slug };
}

export function slugify(name: string): string {
  const slug = name.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '');
  return slug || 'org';
}

/** `acme`, then `acme-2`, `acme-3`... */
async function freeSlug(tx: Executor, base: string): Promise<string> {
  const taken = new Set((await tx.query<{ slug: string }>(
    `SELECT slug FROM orgs WHERE slug = $1 OR slug LIKE $1 || '-%'`, [base])).map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * Creators of one base slug take turns (a transaction cannot see another's uncommitted org, so
 * without the lock concurrent creators keep choosing the same slug); the unique index stays the last word.
 */
async function insertOrgWithFreeSlug(tx: Executor, org: { id: string; accountId: string; name: string }): Promise<string> {
  const base = slugify(org.name);
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 3))', [`org-slug:${base}`]);
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = await freeSlug(tx, base);
    const rows = await tx.query('INSERT INTO orgs (id, account_id, slug, name) VALUES ($1, $2, $3, $4) ON CONFLICT (slug) DO NOTHING RETURNING id',
      [org.id, org.accountId, slug, org.name]);
    if (rows.length) return slug;
  }
  throw new AppError(409, 'CONFLICT', 'could not find a free org slug; try again', { field: 'org_name' });
}
