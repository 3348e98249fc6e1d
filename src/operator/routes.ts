import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { PLAN_VALUE_MAX } from '../plans/catalog.js';
import type { Services } from '../services.js';
import {
  AccountParams, AccountPlanResult, Agent, ClearOverridesQuery, CreateAgentBody, CreatedAgent, CreatedToken, CreatedUser, CreateTokenBody,
  CreateUserBody, OverridesBody, PlanMoveBody, UserParams,
} from './schema.js';
import { bootstrapToken, bootstrapUser, clearOverrides, createAgent, deleteAgent, getAgent, listAgents, moveAccountPlan, setOverrides } from './service.js';

const tags = ['operator'];

export function registerOperatorRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'PUT', url: '/operator/accounts/:id/plan', auth: 'operator', tags, errors: [409],
    summary: 'Put an account on a catalog plan',
    description: '409 `SUBSCRIPTION_STATE` for a different plan while the account holds a paid subscription; naming only the fallback is accepted. Holds reconcile at once.',
    params: AccountParams, body: PlanMoveBody, response: { 200: AccountPlanResult },
    handler: async (request) => moveAccountPlan(services, request.params.id, request.body),
  });

  addRoute(app, {
    method: 'PUT', url: '/operator/accounts/:id/overrides', auth: 'operator', tags,
    summary: "Replace an account's cap overrides",
    description: `Unknown column, or a value that is not a whole number from 0 to ${PLAN_VALUE_MAX}: 400 \`PLAN_OVERRIDE_INVALID\` for the whole request. A past \`expires_at\` is refused; after it passes the override stops applying.`,
    params: AccountParams, body: OverridesBody, response: { 200: AccountPlanResult },
    handler: async (request) => setOverrides(services, request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: '/operator/accounts/:id/overrides', auth: 'operator', tags,
    summary: "Remove an account's overrides",
    description: 'The optional `reason` is recorded on the `overrides_cleared` billing event and the audit row.',
    params: AccountParams, querystring: ClearOverridesQuery, response: { 200: AccountPlanResult },
    handler: async (request) => clearOverrides(services, request.params.id, request.query.reason),
  });

  addRoute(app, {
    method: 'POST', url: '/operator/users', auth: 'operator', tags, errors: [409],
    summary: 'Create a verified user who owns a new account and org',
    description: 'An email a user already has (compared without case) is 409 `USER_EXISTS`; an unknown `plan_id` 400 naming it.',
    body: CreateUserBody, response: { 201: CreatedUser },
    handler: async (request, reply) => reply.code(201).send(await bootstrapUser(services, request.body)),
  });

  addRoute(app, {
    method: 'POST', url: '/operator/users/:user_id/api-tokens', auth: 'operator', tags, errors: [403],
    summary: 'Mint an API token for a user (shown once)',
    description: 'Counted against `max_api_tokens_per_user` of the user\'s plan (422 `QUOTA_EXCEEDED`). A user without a verified email is 403 `EMAIL_NOT_VERIFIED`; an unknown user 404; an `org_id` the user is no member of 400 naming it.',
    params: UserParams, body: CreateTokenBody, response: { 201: CreatedToken },
    handler: async (request, reply) => reply.code(201).send(await bootstrapToken(services, request.params.user_id, request.body)),
  });

  addRoute(app, {
    method: 'POST', url: '/operator/agents', auth: 'operator', tags,
    summary: 'Register a probe agent for a region (token shown once)',
    body: CreateAgentBody, location: '/operator/agents', response: { 201: CreatedAgent }, errors: [422],
    handler: async (request) => createAgent(services, request.body),
  });

  addRoute(app, {
    method: 'GET', url: '/operator/agents', auth: 'operator', tags,
    summary: 'List probe agents',
    response: { 200: Type.Object({ agents: Type.Array(Agent) }) },
    handler: async () => ({ agents: await listAgents(services) }),
  });

  addRoute(app, {
    method: 'GET', url: '/operator/agents/:id', auth: 'operator', tags,
    summary: 'Get a probe agent',
    params: IdParams, response: { 200: Agent },
    handler: async (request) => getAgent(services, request.params.id),
  });

  addRoute(app, {
    method: 'DELETE', url: '/operator/agents/:id', auth: 'operator', tags,
    summary: 'Delete a probe agent; its token stops working at once',
    params: IdParams, response: { 204: null },
    handler: async (request, reply) => {
      await deleteAgent(services, request.params.id);
      return reply.code(204).send();
    },
  });
}
