// The usage view (service-api.md: `GET /api/v1/orgs/{id}/usage`): every pooled quota as current
// versus limit, from the same plan row and count queries that enforcement uses.
import { Type, type Static } from '@sinclair/typebox';
import type { Executor } from '../db/db.js';
import { FEATURE_FLAGS, POLICY_COLUMNS, QUOTA_COLUMNS, RATE_COLUMNS, SUPPORT_PER_MINUTE, type QuotaColumn } from './catalog.js';
import type { EffectivePlan } from './service.js';

/** Counts a quota's rows for an account (and the asking user, for per-user quotas). */
export type UsageCounter = (db: Executor, scope: { accountId: string; userId: string; now: Date }) => Promise<number>;

const counters = new Map<QuotaColumn, UsageCounter>();

/** Each domain registers the count query its enforcement uses; a quota with no rows yet counts 0. */
export function registerUsageCounter(column: QuotaColumn, counter: UsageCounter): void {
  counters.set(column, counter);
}

/** Unlimited shows as the string "infinity" (JSON has no infinite number). */
export const Limit = Type.Union([Type.Integer(), Type.Literal('infinity')]);
const showLimit = (n: number | null): number | 'infinity' => n ?? 'infinity';

const record = <T extends readonly string[], S extends Parameters<typeof Type.Object>[0][string]>(keys: T, schema: S) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, schema])) as Record<T[number], S>);

export const Usage = Type.Object({
  org_id: Type.String(),
  account_id: Type.String(),
  plan: Type.Object({ id: Type.String(), name: Type.String() }),
  quotas: record(QUOTA_COLUMNS, Type.Object({ current: Type.Integer(), limit: Limit })),
  policy: record(POLICY_COLUMNS, Limit),
  rate_budgets: Type.Object({ ...record(RATE_COLUMNS, Limit).properties, support_per_minute: Type.Integer() }),
  features: record(FEATURE_FLAGS, Type.Boolean()),
  overrides: Type.Object({ columns: Type.Array(Type.String()), expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) }),
}, { description: 'Counts are account totals, except `max_api_tokens_per_user`, which counts the caller\'s tokens, and the per-monitor `max_regions`, whose `current` is the most regions any one monitor of the account holds. Unlimited is "infinity".' });

/**
 * An org's usage under `plan` (its account's). `userPlan` is the caller's home account's plan, or
 * null without one: the per-user token cap is enforced from it, so it is reported from it too.
 */
export async function usageReport(db: Executor, plan: EffectivePlan, userPlan: EffectivePlan | null, ids: { orgId: string; accountId: string; userId: string; now: Date }): Promise<Static<typeof Usage>> {
  const scope = { accountId: ids.accountId, userId: ids.userId, now: ids.now };
  const currents = await Promise.all(QUOTA_COLUMNS.map((c) => counters.get(c)?.(db, scope) ?? Promise.resolve(0)));
  const limitOf = (c: (typeof QUOTA_COLUMNS)[number]) => showLimit(c === 'max_api_tokens_per_user' ? userPlan?.caps[c] ?? null : plan.caps[c]);
  return {
    org_id: ids.orgId,
    account_id: ids.accountId,
    plan: { id: plan.planId, name: plan.planName },
    quotas: Object.fromEntries(QUOTA_COLUMNS.map((c, i) => [c, { current: currents[i]!, limit: limitOf(c) }])) as never,
    policy: Object.fromEntries(POLICY_COLUMNS.map((c) => [c, showLimit(plan.caps[c])])) as never,
    rate_budgets: { ...Object.fromEntries(RATE_COLUMNS.map((c) => [c, showLimit(plan.caps[c])])), support_per_minute: SUPPORT_PER_MINUTE } as never,
    features: { ...plan.flags },
    overrides: { columns: plan.overridden, expires_at: plan.overrideExpiresAt?.toISOString() ?? null },
  };
}

// Counters of the foundation's own tables.
registerUsageCounter('max_orgs', async (db, { accountId }) => count(db,
  'SELECT count(*)::int AS n FROM orgs WHERE account_id = $1 AND deleted_at IS NULL', [accountId]));
registerUsageCounter('max_members', async (db, { accountId }) => count(db,
  `SELECT count(DISTINCT m.user_id)::int AS n FROM memberships m JOIN orgs o ON o.id = m.org_id
    WHERE o.account_id = $1 AND o.deleted_at IS NULL`, [accountId]));
registerUsageCounter('max_api_tokens_per_user', async (db, { userId, now }) => count(db,
  'SELECT count(*)::int AS n FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)', [userId, now]));

async function count(db: Executor, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql, params);
  return row?.n ?? 0;
}

export { showLimit };
