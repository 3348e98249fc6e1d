import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import type { Services } from '../services.js';
import {
  CreateMaintenanceBody, ListMaintenanceQuery, MAINTENANCE_UPDATES_MAX, MaintenanceList, MaintenanceWindow, PatchMaintenanceBody,
  PostMaintenanceUpdateBody,
} from './schema.js';
import { cancelWindow, createWindow, getWindowInOrg, listWindows, patchWindow, postUpdate, type MaintenanceCtx } from './service.js';

const TAGS = ['maintenance'];
const BASE = '/api/v1/maintenance';

export function registerMaintenanceRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): MaintenanceCtx => {
    const { actor, org, userId } = request.auth!;
    return {
      db: services.db, clock: services.clock, actor, org: org!, userId, plans: services.plans, writeSource: writeSourceOf(request),
    };
  };

  addRoute(app, {
    method: 'GET', url: BASE, auth: 'user', scope: 'maintenance:read', tags: TAGS,
    summary: "List the org's maintenance windows",
    description: '`status` filters: `active`, `upcoming` (soonest first), `past` (ended or cancelled, latest first) or `all` (default, latest start first).',
    querystring: ListMaintenanceQuery,
    response: { 200: MaintenanceList },
    handler: async (request) => {
      const { limit = 50, offset = 0, status = 'all' } = request.query;
      return listWindows(ctx(request), status, { limit, offset });
    },
  });

  addRoute(app, {
    method: 'POST', url: BASE, auth: 'user', scope: 'maintenance:write', tags: TAGS,
    summary: 'Schedule a maintenance window',
    description: `Answers 201 with \`Location\`. \`ends_at\` must be after \`starts_at\` and in the future; \`components\` are monitors of the org (400 \`VALIDATION_FAILED\` naming \`components[i]\`). Counted against the account's \`max_maintenance_windows\` (windows not yet ended; 422 \`QUOTA_EXCEEDED\`). ${WRITE_SOURCE_TEXT}`,
    body: CreateMaintenanceBody,
    location: BASE, response: { 201: MaintenanceWindow },
    handler: async (request) => createWindow(ctx(request), request.body),
  });

  addRoute(app, {
    method: 'GET', url: `${BASE}/:id`, auth: 'user', scope: 'maintenance:read', tags: TAGS,
    summary: 'Get a maintenance window', params: IdParams,
    response: { 200: MaintenanceWindow },
    handler: async (request) => getWindowInOrg(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PATCH', url: `${BASE}/:id`, auth: 'user', scope: 'maintenance:write', tags: TAGS, errors: [409],
    summary: 'Edit a maintenance window',
    description: `Title, description, time range, components, alert suppression, on an upcoming or running window. \`ends_at\` must stay in the future, except that on a running window an \`ends_at\` at or before now ends it at the server's clock. An edit keeps the window's state: an upcoming window's \`starts_at\` must stay in the future and a running window's in the past (400 \`VALIDATION_FAILED\` naming \`starts_at\`). A cancelled window is 422 \`MAINTENANCE_CANCELLED\`; an ended one 409 \`CONFLICT\`. ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PatchMaintenanceBody,
    response: { 200: MaintenanceWindow },
    handler: async (request) => patchWindow(ctx(request), request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: `${BASE}/:id`, auth: 'user', scope: 'maintenance:delete', tags: TAGS, errors: [409],
    summary: 'Cancel a maintenance window',
    description: 'Cancels a window that has not ended (204). It stays as history: `status` `cancelled` with `deleted_at` and `deleted_by`. An ended window is 409 `CONFLICT`; one already cancelled 422 `MAINTENANCE_CANCELLED`.',
    params: IdParams,
    response: { 204: null },
    handler: async (request, reply) => {
      await cancelWindow(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/updates`, auth: 'user', scope: 'maintenance:write', tags: TAGS,
    summary: 'Post a status update to a maintenance window',
    description: `To an upcoming, running or ended window; answers 201 with the window, its \`updates\` oldest first. A cancelled window is 422 \`MAINTENANCE_CANCELLED\`; past ${MAINTENANCE_UPDATES_MAX} updates 422 \`MAINTENANCE_UPDATE_LIMIT\`. The update is announced to status-page subscribers in the transaction that records it (through the hook status pages register; until they exist, it is shown with the window only). ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PostMaintenanceUpdateBody,
    response: { 201: MaintenanceWindow },
    handler: async (request, reply) => reply.code(201).send(await postUpdate(ctx(request), request.params.id, request.body.message)),
  });
}
