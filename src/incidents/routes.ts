import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import {
  DeclareIncidentBody, Incident, IncidentDetail, IncidentList, IncidentPeriodList, INCIDENT_UPDATE_MAX_CHARS, ListIncidentsQuery, PatchIncidentBody,
  PostIncidentUpdateBody, TargetIncidentsQuery,
} from './schema.js';
import {
  acknowledgeIncident, declareIncident, getIncident, listIncidents, narrateIncident, postIncidentUpdate, resolveIncident, targetIncidentPeriods,
  type IncidentsCtx,
} from './service.js';

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
    method: 'POST', url: BASE, auth: 'user', scope: 'incidents:write', tags: TAGS,
    summary: 'Declare an incident',
    description: 'An incident a person opens (`source: declared`): open from now until resolved. Answers 201 with `Location` and the incident with its timeline. Audited as `incident.declared`.',
    body: DeclareIncidentBody,
    location: BASE, response: { 201: IncidentDetail },
    handler: async (request) => declareIncident(ctx(request), request.body),
  });

  addRoute(app, {
    method: 'PATCH', url: `${BASE}/:id`, auth: 'user', scope: 'incidents:write', tags: TAGS, errors: [403, 422],
    summary: "Narrate an incident",
    description: '`title`, `public_title`, `public_description`, `severity`; `counts_as_downtime` on declared incidents only (a monitor incident is 422 `VALIDATION_FAILED`). JSON `null` clears a field, an omitted one stays; a declared incident\'s `title` cannot be cleared (400 `VALIDATION_FAILED`). Needs a plan with incident narration (403 `INCIDENT_NARRATION_DISABLED`, after the 404 of an unknown or foreign id). Audited as `incident.narrated`.',
    params: IdParams, body: PatchIncidentBody,
    response: { 200: IncidentDetail },
    handler: async (request) => narrateIncident({ ...ctx(request), plan: request.auth!.plan! }, request.params.id, request.body),
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/updates`, auth: 'user', scope: 'incidents:write', tags: TAGS, errors: [403],
    summary: 'Post an incident update',
    description: `\`phase\` (\`investigating\`, \`identified\`, \`monitoring\`, \`resolved\`, \`postmortem\`) and \`message\` (1-${INCIDENT_UPDATE_MAX_CHARS} characters). \`resolved\` on an open incident also resolves it. Answers 201 with the incident, updates oldest first. Needs a plan with incident narration (403 \`INCIDENT_NARRATION_DISABLED\`, after the 404 of an unknown or foreign id). Audited as \`incident.update_posted\`.`,
    params: IdParams, body: PostIncidentUpdateBody,
    response: { 201: IncidentDetail },
    handler: async (request, reply) => reply.code(201).send(await postIncidentUpdate({ ...ctx(request), plan: request.auth!.plan! }, request.params.id, request.body)),
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
    description: 'Closes it now (`ended_at` and `resolved_at` now) and stops reminders. A probed monitor still failing opens a new incident only after `alert_confirmations` further failing checks; a manual monitor only once a state of another status is set (restating the same state reopens nothing). Resolving a resolved incident answers it unchanged. Audited as `incident.resolved`.',
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
