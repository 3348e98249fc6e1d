import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import type { Services } from '../services.js';
import { isUuid } from '../shared/ids.js';
import { ManualState, PutManualStateBody } from './schema.js';
import { getManualState, putManualState, refuseUnlessManual, type ManualCtx } from './service.js';

const TAGS = ['targets'];

export function registerManualRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): ManualCtx => {
    const { actor, org, userId } = request.auth!;
    return { db: services.db, clock: services.clock, actor, org: org!, userId, results: services.results, writeSource: writeSourceOf(request) };
  };

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/state', auth: 'user', scope: 'targets:read', tags: TAGS,
    summary: "A manual monitor's state",
    description: 'Until the first set: `up`, `set_at` the creation time, `set_by` null. 404 `MANUAL_NOT_CONFIGURED` on any other kind.',
    params: IdParams,
    response: { 200: ManualState },
    handler: async (request) => getManualState(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PUT', url: '/api/v1/targets/:id/state', auth: 'user', scope: 'targets:write', tags: TAGS,
    summary: "Set a manual monitor's state",
    description: `A status or note that differs from the current one writes a check result at once and an audit row \`target.state_set\`; the same status and note again changes nothing. On a paused (\`enabled: false\`) or held monitor the state is stored and audited but no result is written, so nothing alerts; the scheduler reports the state within a minute of the monitor running again. The note is one line of at most 200 characters, trimmed; it replaces the previous note (omitted, null or blank clears it). A bad status or note is 400 \`INVALID_MANUAL_STATE\`; any other kind of monitor is 404 \`MANUAL_NOT_CONFIGURED\`. On the target, ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PutManualStateBody,
    // A malformed id is left to the params schema (404).
    beforeValidation: async (request) => {
      const { id } = request.params as { id: string };
      if (isUuid(id)) await refuseUnlessManual(ctx(request), id);
    },
    response: { 200: ManualState },
    handler: async (request) => putManualState(ctx(request), request.params.id, request.body),
  });
}
