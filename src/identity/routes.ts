import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute } from '../http/route.js';
import { Limit, showLimit, usageReport, Usage } from '../plans/usage.js';
import type { Services } from '../services.js';
import { notFound } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import { countLiveTokens } from './api-tokens.js';
import { getUser, membershipsOf } from './users.js';

const Me = Type.Object({
  id: Type.String(),
  email: Type.String(),
  email_verified: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  orgs: Type.Array(Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String(), role: Type.String({ enum: ['Owner', 'Member'] }) })),
  token: Type.Object({
    id: Type.String(),
    scopes: Type.Array(Type.String()),
    org_id: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }, { description: 'The token this request authenticated with.' }),
});

const CurrentAndLimit = Type.Object({ current: Type.Integer(), limit: Limit });

export function registerIdentityRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/me', auth: 'user', orgScoped: false, tags: ['identity'],
    summary: 'The calling user and token',
    response: { 200: Me },
    handler: async (request) => {
      const { userId, principal } = request.auth!;
      const user = await getUser(services.db, userId);
      if (!user) throw notFound('user');
      const orgs = await membershipsOf(services.db, userId);
      return {
        id: user.id, email: user.email, email_verified: user.email_verified_at !== null, created_at: user.created_at.toISOString(),
        orgs: orgs.map((m) => ({ id: m.org_id, slug: m.slug, name: m.name, role: m.role })),
        token: { id: principal.tokenId, scopes: [...principal.scopes], org_id: principal.boundOrgId, expires_at: principal.expiresAt?.toISOString() ?? null },
      };
    },
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/me/usage', auth: 'user', orgScoped: false, tags: ['identity'],
    summary: "The caller's API tokens and owned orgs against their limits",
    description: "Limits come from the plan of the user's home account: the one they own, else their oldest membership's (never the bound org's account).",
    response: { 200: Type.Object({ api_tokens: CurrentAndLimit, owned_orgs: CurrentAndLimit }) },
    handler: async (request) => {
      const { userId } = request.auth!;
      // A member's token bound to someone else's org still reports the member's own limits.
      const homeAccountId = await services.orgs.homeAccountOf(userId);
      const plan = homeAccountId ? await services.plans.forAccount(homeAccountId) : null;
      const [owned] = await services.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM orgs o JOIN accounts a ON a.id = o.account_id WHERE a.owner_user_id = $1 AND o.deleted_at IS NULL`, [userId]);
      return {
        api_tokens: { current: await countLiveTokens(services.db, userId, services.clock.now()), limit: showLimit(plan?.caps.max_api_tokens_per_user ?? null) },
        owned_orgs: { current: owned?.n ?? 0, limit: showLimit(plan?.caps.max_orgs ?? null) },
      };
    },
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/orgs/:id/usage', auth: 'user', orgScoped: false, tags: ['orgs'],
    summary: "An org's plan, quotas (account totals), policy values, rate budgets and feature flags",
    description: "Any member may read it; a non-member, or a token bound to another org, gets 404. `max_api_tokens_per_user` is the caller's own: their tokens against the cap of their home account's plan (as `/me/usage`), which is the one enforced.",
    params: Type.Object({ id: Type.String() }),
    response: { 200: Usage },
    handler: async (request) => {
      const { userId, principal } = request.auth!;
      const orgId = request.params.id;
      if (!isUuid(orgId) || (principal.boundOrgId && principal.boundOrgId !== orgId)) throw notFound('org');
      const org = await services.orgs.forUserById(userId, orgId);
      if (!org) throw notFound('org');
      const plan = await services.plans.forAccount(org.accountId);
      const homeAccountId = await services.orgs.homeAccountOf(userId);
      const userPlan = homeAccountId === org.accountId ? plan : homeAccountId ? await services.plans.forAccount(homeAccountId) : null;
      return usageReport(services.db, plan, userPlan, { orgId, accountId: org.accountId, userId, now: services.clock.now() });
    },
  });
}
