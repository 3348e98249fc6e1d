// Operator rules (service-api.md, "Operator surface"): plan moves, overrides, bootstrap users and tokens.
import type { Static } from '@sinclair/typebox';
import { hash } from '@node-rs/argon2';
import type { Executor } from '../db/db.js';
import { createApiToken } from '../identity/api-tokens.js';
import { createOwner, getUser, membershipsOf } from '../identity/users.js';
import { PLAN_IDS, PLAN_NUMERIC_COLUMNS, PLAN_VALUE_MAX } from '../plans/catalog.js';
import { reconcileHolds } from '../plans/holds.js';
import type { Services } from '../services.js';
import { installDefaultPlan } from '../services.js';
import { writeAudit } from '../shared/audit.js';
import { AppError, notFound } from '../shared/errors.js';
import { instantOf } from '../shared/instant.js';
import { isUuid, newId, randomToken } from '../shared/ids.js';
import { requiredText } from '../shared/text.js';
import type { AccountPlanResult, CreateAgentBody, CreateTokenBody, CreateUserBody, OverridesBody, PlanMoveBody } from './schema.js';

const OPERATOR = { type: 'operator' } as const;
const PAID_STATES = new Set(['active', 'grace']);

type AccountPlan = Static<typeof AccountPlanResult>;

interface AccountRow { id: string; plan_id: string; fallback_plan_id: string | null; subscription_status: string | null }

async function lockAccount(tx: Executor, accountId: string): Promise<AccountRow> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 1))', [accountId]);
  const [row] = await tx.query<AccountRow>('SELECT id, plan_id, fallback_plan_id, subscription_status FROM accounts WHERE id = $1', [accountId]);
  if (!row) throw notFound('account');
  return row;
}

function checkPlanId(planId: string, field: string): void {
  if (!(PLAN_IDS as readonly string[]).includes(planId)) {
    throw new AppError(400, 'VALIDATION_FAILED', `${field} must be a catalog plan: ${PLAN_IDS.join(', ')}`, { field });
  }
}

/** Finishes a plan or override change: events, audit, holds, caches. */
async function settle(services: Services, tx: Executor, accountId: string, event: string, reason: string, details: Record<string, unknown>): Promise<AccountPlan> {
  await tx.query('INSERT INTO account_billing_events (id, account_id, event, reason, details) VALUES ($1, $2, $3, $4, $5)',
    [newId(), accountId, event, reason, JSON.stringify(details)]);
  await writeAudit(tx, OPERATOR, { action: `account.${event}`, accountId, entityType: 'account', entityId: accountId, details: { reason, ...details } });
  const plan = await services.plans.load(tx, accountId);
  const counts = await reconcileHolds(tx, accountId, plan, services);
  const [account] = await tx.query<AccountRow>('SELECT id, plan_id, fallback_plan_id, subscription_status FROM accounts WHERE id = $1', [accountId]);
  const [override] = await tx.query<{ caps: Record<string, number>; reason: string; expires_at: Date | null }>(
    'SELECT caps, reason, expires_at FROM plan_overrides WHERE account_id = $1', [accountId]);
  return {
    account_id: accountId,
    plan_id: account!.plan_id,
    fallback_plan_id: account!.fallback_plan_id,
    overrides: override ? { caps: override.caps, reason: override.reason, expires_at: override.expires_at?.toISOString() ?? null } : null,
    ...counts,
  };
}

export async function moveAccountPlan(services: Services, accountId: string, body: Static<typeof PlanMoveBody>): Promise<AccountPlan> {
  checkPlanId(body.plan_id, 'plan_id');
  if (body.fallback_plan_id !== undefined && body.fallback_plan_id !== null) checkPlanId(body.fallback_plan_id, 'fallback_plan_id');
  const reason = requiredText(body.reason, 'reason');
  const result = await services.db.transaction(async (tx) => {
    const account = await lockAccount(tx, accountId);
    if (account.plan_id !== body.plan_id && PAID_STATES.has(account.subscription_status ?? '')) {
      throw new AppError(409, 'SUBSCRIPTION_STATE', 'the account holds a paid subscription; change its plan through billing', { field: 'plan_id' });
    }
    // Omitted keeps the fallback; null clears it (back to the plan held before paying).
    const fallback = body.fallback_plan_id === undefined ? account.fallback_plan_id : body.fallback_plan_id;
    await tx.query('UPDATE accounts SET plan_id = $2, fallback_plan_id = $3 WHERE id = $1', [accountId, body.plan_id, fallback]);
    return settle(services, tx, accountId, 'plan_changed', reason, { from: account.plan_id, to: body.plan_id, fallback_plan_id: fallback });
  });
  services.plans.invalidate(accountId);
  return result;
}

/** Unknown column or a value that is not a whole number the column can hold refuses the whole request. */
export function validateOverrideCaps(caps: Record<string, unknown>): Record<string, number> {
  for (const [column, value] of Object.entries(caps)) {
    if (!(PLAN_NUMERIC_COLUMNS as readonly string[]).includes(column)) {
      throw new AppError(400, 'PLAN_OVERRIDE_INVALID', `unknown plan column "${column}"`, { field: `caps.${column}` });
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > PLAN_VALUE_MAX) {
      throw new AppError(400, 'PLAN_OVERRIDE_INVALID', `caps.${column} must be a whole number from 0 to ${PLAN_VALUE_MAX}`, { field: `caps.${column}` });
    }
  }
  return caps as Record<string, number>;
}

export async function setOverrides(services: Services, accountId: string, body: Static<typeof OverridesBody>): Promise<AccountPlan> {
  const caps = validateOverrideCaps(body.caps);
  const reason = requiredText(body.reason, 'reason');
  const expiresAt = body.expires_at ? instantOf(body.expires_at, 'expires_at') : null;
  if (expiresAt && expiresAt.getTime() <= services.clock.now().getTime()) {
    throw new AppError(400, 'PLAN_OVERRIDE_INVALID', 'expires_at is in the past', { field: 'expires_at' });
  }
  const result = await services.db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    await tx.query(
      `INSERT INTO plan_overrides (account_id, caps, reason, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id) DO UPDATE SET caps = EXCLUDED.caps, reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at, created_at = now()`,
      [accountId, JSON.stringify(caps), reason, expiresAt]);
    return settle(services, tx, accountId, 'overrides_set', reason, { caps, expires_at: expiresAt?.toISOString() ?? null });
  });
  services.plans.invalidate(accountId);
  return result;
}

export async function clearOverrides(services: Services, accountId: string, given?: string): Promise<AccountPlan> {
  const reason = given === undefined ? 'operator cleared overrides' : requiredText(given, 'reason');
  const result = await services.db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    await tx.query('DELETE FROM plan_overrides WHERE account_id = $1', [accountId]);
    return settle(services, tx, accountId, 'overrides_cleared', reason, {});
  });
  services.plans.invalidate(accountId);
  return result;
}

export async function bootstrapUser(services: Services, body: Static<typeof CreateUserBody>) {
  const planId = body.plan_id ?? (await installDefaultPlan(services.db));
  checkPlanId(planId, 'plan_id');
  const email = body.email.trim();
  return services.db.transaction(async (tx) => {
    const created = await createOwner(tx, { email, planId, orgName: body.org_name === undefined ? email.split('@')[0]! : requiredText(body.org_name, 'org_name'), verified: true });
    await writeAudit(tx, OPERATOR, { action: 'user.created', accountId: created.account_id, orgId: created.org_id, entityType: 'user', entityId: created.user_id });
    return created;
  });
}

export async function bootstrapToken(services: Services, userId: string, body: Static<typeof CreateTokenBody>) {
  const user = await getUser(services.db, userId);
  if (!user) throw notFound('user');
  if (!user.email_verified_at) throw new AppError(403, 'EMAIL_NOT_VERIFIED', 'creating a token needs a verified email');
  const orgId = body.org_id ?? null;
  if (orgId && !(await membershipsOf(services.db, userId)).some((m) => m.org_id === orgId)) {
    throw new AppError(400, 'VALIDATION_FAILED', 'org_id must name an org the user belongs to', { field: 'org_id' });
  }
  const accountId = await services.orgs.homeAccountOf(userId);
  const limit = accountId ? (await services.plans.forAccount(accountId)).caps.max_api_tokens_per_user : null;
  const { row, token } = await createApiToken(services.db, services.clock, {
    userId, name: requiredText(body.name, 'name'), scopes: body.scopes, orgId, expiresInDays: body.expires_in_days ?? null, limit, limitAccountId: accountId, actor: OPERATOR,
  });
  return { id: row.id, prefix: row.prefix, token, scopes: row.scopes, org_id: row.org_id, expires_at: row.expires_at?.toISOString() ?? null };
}

export const AGENT_TOKEN_PREFIX = 'sm_agent_';

export async function createAgent(services: Services, body: Static<typeof CreateAgentBody>) {
  const [region] = await services.db.query('SELECT 1 FROM regions WHERE id = $1', [body.region_id]);
  if (!region) throw new AppError(422, 'REGION_INVALID', `unknown region ${body.region_id}`, { field: 'region_id' });
  const token = AGENT_TOKEN_PREFIX + randomToken(32);
  const id = newId();
  await services.db.query('INSERT INTO agents (id, region_id, name, prefix, token_hash) VALUES ($1, $2, $3, $4, $5)',
    [id, body.region_id, requiredText(body.name, 'name'), token.slice(0, 17), await hash(token)]);
  return { id, region_id: body.region_id, token };
}

export async function listAgents(services: Services) {
  return (await services.db.query<AgentRow>(`${AGENT_SELECT} ORDER BY created_at, id`)).map(toAgent);
}

export async function getAgent(services: Services, agentId: string) {
  const [row] = isUuid(agentId) ? await services.db.query<AgentRow>(`${AGENT_SELECT} WHERE id = $1`, [agentId]) : [];
  if (!row) throw notFound('agent');
  return toAgent(row);
}

type AgentRow = { id: string; region_id: string; name: string; prefix: string; last_seen_at: Date | null; created_at: Date };
const AGENT_SELECT = 'SELECT id, region_id, name, prefix, last_seen_at, created_at FROM agents';
const toAgent = (r: AgentRow) => ({ ...r, last_seen_at: r.last_seen_at?.toISOString() ?? null, created_at: r.created_at.toISOString() });

/** The agent's token stops working at once: it authenticates against this row. */
export async function deleteAgent(services: Services, agentId: string): Promise<void> {
  const deleted = isUuid(agentId) && (await services.db.query('DELETE FROM agents WHERE id = $1 RETURNING id', [agentId])).length > 0;
  if (!deleted) throw notFound('agent');
}
