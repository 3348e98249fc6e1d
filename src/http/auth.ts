// Authenticates `user` routes with a bearer API token, resolves the org, checks the scope and the
// rate budget. Sessions (a later domain) slot in beside tokens in `identify()`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TokenAuthError } from '../identity/api-tokens.js';
import { hasScope } from '../identity/scopes.js';
import { ORG_SLUG_RE } from '../orgs/directory.js';
import { budgetOf, rateCategoryOf } from '../plans/rate-budget.js';
import { AppError } from '../shared/errors.js';
import { safeEqual } from '../shared/ids.js';
import type { OrgRef } from '../shared/context.js';
import type { Services } from '../services.js';
import type { RequestAuth } from './route-config.js';

const BEARER_RE = /^Bearer +(\S+) *$/i;

export function installAuth(app: FastifyInstance, services: Services): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request) => {
    const mode = request.routeOptions.config.auth ?? 'public';
    if (mode === 'operator') return checkOperator(request, services.operatorSecret);
    if (mode === 'user') request.auth = await authenticateUser(request, services);
  });
}

/** The operator surface is invisible (404) without the configured secret, and to anyone not holding it. */
function checkOperator(request: FastifyRequest, secret: string | null): void {
  const presented = BEARER_RE.exec(request.headers.authorization ?? '')?.[1];
  if (!secret || !presented || !safeEqual(presented, secret)) throw new AppError(404, 'NOT_FOUND', 'route not found');
}

async function authenticateUser(request: FastifyRequest, services: Services): Promise<RequestAuth> {
  const raw = BEARER_RE.exec(request.headers.authorization ?? '')?.[1];
  if (!raw) throw new AppError(401, 'UNAUTHENTICATED', 'send Authorization: Bearer <API token>');
  const meta = { ip: request.ip, userAgent: request.headers['user-agent'] };
  let verified;
  try {
    verified = await services.tokens.verify(raw);
  } catch (err) {
    if (err instanceof TokenAuthError) {
      services.loginAttempts.push({ method: 'api_token', success: false, failureReason: err.reason, tokenId: err.tokenId, userId: err.userId, ...meta });
    }
    throw err;
  }
  const { principal, fresh } = verified;
  if (principal.audience) {
    services.loginAttempts.push({ method: 'api_token', success: false, failureReason: 'token_audience', tokenId: principal.tokenId, userId: principal.userId, ...meta });
    throw new AppError(401, 'TOKEN_AUDIENCE', 'this token was minted for the MCP server and is not valid on the REST API');
  }
  if (fresh) services.loginAttempts.push({ method: 'api_token', success: true, tokenId: principal.tokenId, userId: principal.userId, ...meta });

  const config = request.routeOptions.config;
  const org = config.orgScoped === false ? await boundOrg(services, principal.userId, principal.boundOrgId) : await resolveOrg(request, services, principal.userId, principal.boundOrgId);
  if (config.scope && !hasScope(principal.scopes, config.scope)) {
    throw new AppError(403, 'INSUFFICIENT_SCOPE', `this token lacks the scope ${config.scope}`);
  }
  const accountId = org?.accountId ?? (await services.orgs.homeAccountOf(principal.userId));
  const plan = accountId ? await services.plans.forAccount(accountId) : null;
  if (plan && accountId) chargeRateBudget(request, services, accountId, principal.userId, plan.caps);
  services.tokens.touch(principal.tokenId);
  return { actor: { type: 'token', userId: principal.userId, tokenId: principal.tokenId }, principal, userId: principal.userId, org, accountId, plan };
}

/** `X-Service-Org` rules (service-api.md, "API token auth" 3). */
async function resolveOrg(request: FastifyRequest, services: Services, userId: string, boundOrgId: string | null): Promise<OrgRef> {
  const header = request.headers['x-service-org'];
  if (header === undefined) {
    if (!boundOrgId) throw new AppError(400, 'ORG_REQUIRED', 'this token is not bound to an org: send X-Service-Org: <org slug>');
    return (await boundOrg(services, userId, boundOrgId))!;
  }
  if (typeof header !== 'string' || !ORG_SLUG_RE.test(header)) {
    throw new AppError(400, 'ORG_HEADER_INVALID', 'X-Service-Org is not a valid org slug', { field: 'X-Service-Org' });
  }
  const org = await services.orgs.forUserBySlug(userId, header);
  if (boundOrgId && org?.id !== boundOrgId) {
    if (!org && !(await services.orgs.slugExists(header))) {
      throw new AppError(400, 'ORG_HEADER_INVALID', `no org "${header}"`, { field: 'X-Service-Org' });
    }
    throw new AppError(403, 'ORG_HEADER_MISMATCH', 'X-Service-Org names another org than the one this token is bound to', { field: 'X-Service-Org' });
  }
  if (!org) throw new AppError(400, 'ORG_HEADER_INVALID', `no org "${header}"`, { field: 'X-Service-Org' });
  return org;
}

/** A bound token whose org was deleted, or whose user left it, no longer authenticates. */
async function boundOrg(services: Services, userId: string, boundOrgId: string | null): Promise<OrgRef | null> {
  if (!boundOrgId) return null;
  const org = await services.orgs.forUserById(userId, boundOrgId);
  if (!org) throw new AppError(401, 'UNAUTHENTICATED', 'the org this token is bound to is no longer available');
  return org;
}

function chargeRateBudget(request: FastifyRequest, services: Services, accountId: string, userId: string, caps: Parameters<typeof budgetOf>[0]): void {
  const category = rateCategoryOf(request.method, request.url);
  if (!category) return;
  const limit = budgetOf(caps, category);
  const verdict = services.rateLimiter.take([{ kind: 'account', id: accountId }, { kind: 'user', id: userId }], category, limit);
  if (verdict.allowed) return;
  services.quotaEvents.push({
    event: 'rate_limited', quota: category, accountId, userId, ip: request.ip,
    details: { tier: verdict.subject.kind, limit, method: request.method, route: request.routeOptions.url },
  });
  throw new AppError(429, 'RATE_LIMITED', `rate budget ${category} (${limit}/min) used up for this ${verdict.subject.kind}`, { retryAfter: verdict.retryAfterSecs });
}
