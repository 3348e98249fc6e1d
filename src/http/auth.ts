// Authenticates `user` routes with a bearer API token, resolves the org, checks the scope and the
// rate budget. Sessions (a later domain) slot in beside tokens where `authenticateUser` reads the credential.
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
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
    // routeOptions builds a new object on every access: read it once.
    const config = request.routeOptions.config;
    const mode = config.auth ?? 'public';
    if (mode === 'operator') return checkOperator(request, services.operatorSecret);
    if (mode === 'user') request.auth = await authenticateUser(request, services, config);
  });
}

function authorizationCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') count++;
  return count;
}

/** The operator surface is invisible (404) without the configured secret, and to anyone not holding it. */
function checkOperator(request: FastifyRequest, secret: string | null): void {
  const presented = BEARER_RE.exec(request.headers.authorization ?? '')?.[1];
  if (!secret || !presented || !safeEqual(presented, secret) || authorizationCount(request) > 1) throw new AppError(404, 'NOT_FOUND', 'route not found');
}

async function authenticateUser(request: FastifyRequest, services: Services, config: FastifyContextConfig): Promise<RequestAuth> {
  const header = request.headers.authorization;
  if (header === undefined) throw new AppError(401, 'UNAUTHENTICATED', 'send Authorization: Bearer <API token>');
  // A presented header that is not a bearer token is a failed attempt too (Events 4: every attempt is recorded).
  const raw = BEARER_RE.exec(header)?.[1];
  // Node keeps the first of two Authorization headers; a proxy may act on the last. Two are no answer.
  if (!raw || authorizationCount(request) > 1) {
    recordFailure(request, services, 'malformed_token');
    throw new AppError(401, 'UNAUTHENTICATED', 'send Authorization: Bearer <API token>');
  }
  let verified;
  try {
    verified = await services.tokens.verify(raw);
  } catch (err) {
    if (err instanceof TokenAuthError) recordFailure(request, services, err.reason, err.tokenId, err.userId);
    throw err;
  }
  const { principal, fresh } = verified;
  if (principal.audience) {
    recordFailure(request, services, 'token_audience', principal.tokenId, principal.userId);
    throw new AppError(401, 'TOKEN_AUDIENCE', 'this token was minted for the MCP server and is not valid on the REST API');
  }
  const bound = await boundOrg(services, principal.userId, principal.boundOrgId);
  if (principal.boundOrgId && !bound) {
    recordFailure(request, services, 'org_unavailable', principal.tokenId, principal.userId);
    throw new AppError(401, 'UNAUTHENTICATED', 'the org this token is bound to is no longer available');
  }
  // Rows for every failure and every check against the store; a cache hit is not recorded again.
  if (fresh) services.loginAttempts.push({ method: 'api_token', success: true, tokenId: principal.tokenId, userId: principal.userId, ip: request.ip, userAgent: request.headers['user-agent'] });

  // The spec states the header rules without exception, so routes that act in no org (the caller,
  // the region catalogue, an org named by the path) check them too.
  const org = await resolveOrg(request, services, principal.userId, bound);
  if (config.scope && !hasScope(principal.scopes, config.scope)) {
    throw new AppError(403, 'INSUFFICIENT_SCOPE', `this token lacks the scope ${config.scope}`);
  }
  const accountId = org?.accountId ?? (await services.orgs.homeAccountOf(principal.userId));
  const plan = accountId ? await services.plans.forAccount(accountId) : null;
  if (plan && accountId) chargeRateBudget(request, services, accountId, principal.userId, plan.caps);
  void services.tokens.touch(principal.tokenId);
  return { actor: { type: 'token', userId: principal.userId, tokenId: principal.tokenId }, principal, userId: principal.userId, org, accountId, plan };
}

// A module function rather than a closure inside authenticateUser, which runs on every request (bench/api.ts).
function recordFailure(request: FastifyRequest, services: Services, failureReason: string, tokenId?: string, userId?: string): void {
  services.loginAttempts.push({ method: 'api_token', success: false, failureReason, tokenId, userId, ip: request.ip, userAgent: request.headers['user-agent'] });
}

/**
 * `X-Service-Org` rules (service-api.md, "API token auth" 3). A bound token's header must name its own
 * org, else 403 ORG_HEADER_MISMATCH; a slug no org holds is 400 ORG_HEADER_INVALID for either kind.
 * An unbound token naming an org its user does not belong to gets the same 400 as an unknown slug.
 */
async function resolveOrg(request: FastifyRequest, services: Services, userId: string, bound: OrgRef | null): Promise<OrgRef> {
  const header = request.headers['x-service-org'];
  if (header === undefined) {
    if (!bound) throw new AppError(400, 'ORG_REQUIRED', 'this token is not bound to an org: send X-Service-Org: <org slug>', { field: 'X-Service-Org' });
    return bound;
  }
  if (typeof header !== 'string' || !ORG_SLUG_RE.test(header)) {
    throw new AppError(400, 'ORG_HEADER_INVALID', 'X-Service-Org is not a valid org slug', { field: 'X-Service-Org' });
  }
  if (bound?.slug === header) return bound;
  const org = await services.orgs.forUserBySlug(userId, header);
  if (!org && !(bound && (await services.orgs.slugExists(header)))) {
    throw new AppError(400, 'ORG_HEADER_INVALID', `no org "${header}"`, { field: 'X-Service-Org' });
  }
  if (bound) {
    throw new AppError(403, 'ORG_HEADER_MISMATCH', 'X-Service-Org names another org than the one this token is bound to', { field: 'X-Service-Org' });
  }
  return org!;
}

/** The org a token is bound to, while the user still belongs to it and it is live; null when unbound or gone. */
async function boundOrg(services: Services, userId: string, boundOrgId: string | null): Promise<OrgRef | null> {
  return boundOrgId ? services.orgs.forUserById(userId, boundOrgId) : null;
}

function chargeRateBudget(request: FastifyRequest, services: Services, accountId: string, userId: string, caps: Parameters<typeof budgetOf>[0]): void {
  // The matched route's pattern (an escaped or absolute-form path names the same route); the raw path when none matched.
  const category = rateCategoryOf(request.method, request.routeOptions.url ?? request.url);
  if (!category) return;
  const limit = budgetOf(caps, category);
  const verdict = services.rateLimiter.take([{ kind: 'account', id: accountId }, { kind: 'user', id: userId }], category, limit);
  if (verdict.allowed) return;
  throw new AppError(429, 'RATE_LIMITED', `rate budget ${category} (${limit}/min) used up for this ${verdict.subject.kind}`, {
    retryAfter: verdict.retryAfterSecs,
    rejection: { event: 'rate_limited', quota: category, details: { tier: verdict.subject.kind, limit }, accountId, userId },
  });
}
