import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import { Incident, IncidentDetail, IncidentList, IncidentPeriodList, ListIncidentsQuery, TargetIncidentsQuery } from './schema.js';
import { acknowledgeIncident, getIncident, listIncidents, resolveIncident, targetIncidentPeriods, type IncidentsCtx } from './service.js';

const TAGS = ['incidents'];
const BASE = '/api/v1/incidents';

export function registerIncidentRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): IncidentsCtx => {
    const { actor, org } = request.auth!;
    return { db: services.db, clock: services.clock, actor, org: org! };
  };

  addRoute(app, {
    method: 'GET', url: BASE, auth: 'user', scope: 'incidents:read', tags: TAGS,
    summary: "List the org's incidents",
    description: '`status`: `open`, `resolved` or `all` (default); `target_id`: one monitor\'s. Latest start first.',
    querystring: ListIncidentsQuery,
    response: { 200: IncidentList },
    handler: async (request) => listIncidents(ctx(request), request.query),
  });

  addRoute(app, {
    method: 'GET', url: `${BASE}/:id`, auth: 'user', scope: 'incidents:read', tags: TAGS,
    summary: 'Get an incident with its timeline', params: IdParams,
    response: { 200: IncidentDetail },
    handler: async (request) => getIncident(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/acknowledge`, auth: 'user', scope: 'incidents:write', tags: TAGS, errors: [409],
    summary: 'Acknowledge an incident',
    description: 'Stops reminders. Acknowledging an acknowledged incident answers it unchanged; a resolved incident is 409 `CONFLICT`. Audited as `incident.acknowledged`.',
    params: IdParams,
    response: { 200: Incident },
    handler: async (request) => acknowledgeIncident(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/resolve`, auth: 'user', scope: 'incidents:write', tags: TAGS,
    summary: 'Resolve an incident by hand',
    description: 'Closes it now (`ended_at` and `resolved_at` now) and stops reminders. A monitor still failing opens a new incident only after `alert_confirmations` further failing checks. Resolving a resolved incident answers it unchanged. Audited as `incident.resolved`.',
    params: IdParams,
    response: { 200: Incident },
    handler: async (request) => resolveIncident(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/incidents', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's incident history",
    description: 'Coalesced periods: incidents of the monitor that overlap merge into one period. Periods overlapping `[from, to]` (default: the plan\'s `retention_days` up to now), newest first; `ongoing_only` keeps the period still open. `from` after `to` is 400 `VALIDATION_FAILED`.',
    params: IdParams, querystring: TargetIncidentsQuery,
    response: { 200: IncidentPeriodList },
    handler: async (request) => targetIncidentPeriods({ ...ctx(request), plan: request.auth!.plan! }, request.params.id, request.query),
  });
}
