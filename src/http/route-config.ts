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
    /**
     * Whether the handler acts inside the request's org. Default true for `user` routes. Only the
     * OpenAPI text reads it: the `X-Service-Org` rules apply to every `user` route alike.
     */
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
  /** The org the request acts in: the token's bound org, else the one `X-Service-Org` names. */
  org: OrgRef | null;
  /** The quota subject the request is charged to. */
  accountId: string | null;
  plan: EffectivePlan | null;
}
