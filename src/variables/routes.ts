import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import { CreateVariableBody, ListVariablesQuery, RotateVariableBody, Variable, VariableList } from './schema.js';
import { createVariable, deleteVariable, getVariableInOrg, listVariables, rotateVariable, type VariablesCtx } from './service.js';

const TAGS = ['variables'];

/**
 * `rotationCheck` judges a new value where other domains use it (the targets domain's monitor URLs,
 * wired in app.ts: this domain does not import the ones that reference it).
 */
export function registerVariableRoutes(app: FastifyInstance, services: Services, rotationCheck?: (request: FastifyRequest) => VariablesCtx['checkRotation']): void {
  const { sealer } = services;
  const ctx = (request: FastifyRequest): VariablesCtx => {
    const { actor, org } = request.auth!;
    return { db: services.db, actor, org: org!, sealer, checkRotation: rotationCheck?.(request) };
  };

  addRoute(app, {
    method: 'GET', url: '/api/v1/variables', auth: 'user', scope: 'variables:read', tags: TAGS,
    summary: "List the org's variables", description: 'Ordered by key. Secret values are `null`.',
    querystring: ListVariablesQuery,
    response: { 200: VariableList },
    handler: async (request) => listVariables(ctx(request), { limit: request.query.limit ?? 50, offset: request.query.offset ?? 0 }),
  });

  addRoute(app, {
    method: 'POST', url: '/api/v1/variables', auth: 'user', scope: 'variables:write', tags: TAGS, errors: [409],
    summary: 'Create a variable',
    description: 'A secret is sealed at rest and its value is never returned, not even here.',
    body: CreateVariableBody,
    location: '/api/v1/variables', response: { 201: Variable },
    handler: async (request) => createVariable(ctx(request), request.body),
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/variables/:id', auth: 'user', scope: 'variables:read', tags: TAGS,
    summary: 'Get a variable', params: IdParams,
    response: { 200: Variable },
    handler: async (request) => getVariableInOrg(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PATCH', url: '/api/v1/variables/:id', auth: 'user', scope: 'variables:write', tags: TAGS,
    summary: 'Rotate a variable (replace its value)',
    description: '`is_secret` and `key` are fixed at create. A plain value fills the URL of every http monitor referencing it, so it is judged as each of their updates would be: a URL it would make invalid, deny-listed or in a blocked range is refused with that update\'s code (400 `VALIDATION_FAILED`, `URL_PATTERN_BLOCKED`, `DOMAIN_DENYLISTED`, `INVALID_IP_VERSION`), `field` `value`, the monitor named in the message; nothing is changed.',
    params: IdParams, body: RotateVariableBody,
    response: { 200: Variable },
    handler: async (request) => rotateVariable(ctx(request), request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: '/api/v1/variables/:id', auth: 'user', scope: 'variables:delete', tags: TAGS, errors: [409],
    summary: 'Delete a variable', description: '409 `VARIABLE_IN_USE` while a monitor references it.',
    params: IdParams,
    response: { 204: null },
    handler: async (request, reply) => {
      await deleteVariable(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });
}
