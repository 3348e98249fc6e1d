// Subscriptions (service-api.md, "Subscriptions"): this build has no payment provider, so every
// billing endpoint answers 404 BILLING_UNAVAILABLE, as the spec says such a build must, once the
// caller is authenticated (every /api/v1 endpoint needs that, Conventions 2). Declared
// as routes so the OpenAPI document lists them and no caller mistakes them for unknown paths.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { addRoute } from '../http/route.js';
import { AppError } from '../shared/errors.js';

const BILLING_ROUTES: ReadonlyArray<[HTTPMethods, string, string]> = [
  ['GET', '/api/v1/account/billing', 'Subscription status, plan, period end and plans on sale'],
  ['POST', '/api/v1/account/billing/checkout', 'Start a checkout with the payment provider'],
  ['POST', '/api/v1/account/billing/portal', "Open the provider's customer portal"],
  ['PUT', '/api/v1/account/billing/plan', 'Move to another plan'],
  ['POST', '/api/v1/account/billing/cancel', 'Cancel at period end'],
  ['DELETE', '/api/v1/account/billing/cancel', 'Withdraw a scheduled cancel'],
  ['GET', '/api/v1/account/holds', 'Monitors and status pages being held'],
  ['PUT', '/api/v1/account/holds', 'Choose which monitors and status pages to keep'],
];

const unavailable = (): AppError => new AppError(404, 'BILLING_UNAVAILABLE', 'this deployment has no payment provider configured');

export function registerBillingRoutes(app: FastifyInstance): void {
  for (const [method, url, summary] of BILLING_ROUTES) {
    addRoute(app, {
      // Authenticated like all of /api/v1 (401 without credentials); in no org.
      method, url, auth: 'user', orgScoped: false, tags: ['billing'], errors: [404],
      summary,
      description: 'Session only where billing runs. This deployment has no payment provider: an authenticated request is 404 `BILLING_UNAVAILABLE`, before its body is read.',
      // Before the body is read or checked, so nothing but the one answer comes back.
      onArrival: async () => { throw unavailable(); },
      response: {},
      exposeHeadRoute: false,
      handler: async () => { throw unavailable(); },
    });
  }
}
