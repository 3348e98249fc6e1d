// What a route declares about itself; the auth hook, rate budgets and OpenAPI read it.
import type { Scope } from '../identity/scopes.js';
import type { TokenPrincipal } from '../identity/api-tokens.js';
import type { EffectivePlan } from '../plans/service.js';
import type { Actor, OrgRef } from '../shared/context.js';

export type RouteAuth = 'public' | 'user' | 'operator';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call: nobody in particular, a signed-in user or token, or the operator. Default `public`. */
    auth?: RouteAuth;
    /** Token scope the route needs; unset means any authenticated caller. */
    scope?: Scope;
    /** Whether the route acts inside one org (`X-Service-Org` or the token's binding). Default true for `user` routes. */
    orgScoped?: boolean;
  }
  interface FastifyRequest {
    auth: RequestAuth | null;
  }
}

export interface RequestAuth {
  actor: Actor;
  principal: TokenPrincipal;
  userId: string;
  /** The org of an org-scoped route, or the token's bound org. */
  org: OrgRef | null;
  /** The quota subject the request is charged to. */
  accountId: string | null;
  plan: EffectivePlan | null;
}
