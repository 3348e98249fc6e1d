import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { isObject } from '../http/validation.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import type { Services } from '../services.js';
import { isUuid } from '../shared/ids.js';
import { snapshotVariables, type VariableSnapshot } from '../variables/index.js';
import {
  CreateTargetBody, ListTargetsQuery, PatchTargetBody, PutRegionsBody, Target, TargetList, TargetRegions,
} from './schema.js';
import { checkPatchKind, createTarget, deleteTarget, getTargetInOrg, listTargets, patchTarget, type TargetsCtx } from './service.js';
import { refuseManualInterval } from './intervals.js';
import { registerBulkRoutes } from './bulk-routes.js';
import { registerTagRoutes } from './tags.js';
import { getTargetRegions, putTargetRegions } from './target-regions.js';
import { MONITOR_ERRORS_TEXT } from './error-texts.js';

const TAGS = ['targets'];

/** The targets domain's view of one request: its org, plan, caller and the services rules need. */
export function targetsCtx(services: Services, request: FastifyRequest): TargetsCtx {
  const { actor, org, userId, plan } = request.auth!;
  const accountId = org!.accountId;
  let variables: Promise<VariableSnapshot> | undefined;
  return {
    db: services.db, actor, org: org!, userId, plan: plan!, plans: services.plans, writeSource: writeSourceOf(request),
    sealer: services.sealer, regions: services.regions, clock: services.clock, results: services.results,
    network: {
      guard: services.guard, denyLists: services.denyLists.current, rdap: services.rdap,
      onBlocked: (event) => services.quotaEvents.push({ ...event, accountId, userId, ip: request.ip }),
      // Once per request: a bulk create of 10,000 templated URLs reads the variables once.
      variables: () => (variables ??= snapshotVariables(services.db, org!.id)),
    },
  };
}

/** `check.type` of a body not validated yet, when it is a string. */
function checkTypeOf(body: unknown): string | undefined {
  const check = isObject(body) ? body.check : undefined;
  const type = isObject(check) ? check.type : undefined;
  return typeof type === 'string' ? type : undefined;
}

export function registerTargetRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): TargetsCtx => targetsCtx(services, request);
  registerBulkRoutes(app, services);

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets', auth: 'user', scope: 'targets:read', tags: TAGS,
    summary: "List the org's targets", description: 'Oldest first. `tag` matches one tag exactly (trimmed and in Unicode NFC, as tags are stored); `q` is a case-insensitive substring of the name. A blank `tag` or `q` filters nothing.',
    querystring: ListTargetsQuery,
    response: { 200: TargetList },
    handler: async (request) => {
      const { limit = 50, offset = 0, tag, enabled, q } = request.query;
      return listTargets(ctx(request), { tag: tag?.trim().normalize('NFC') || undefined, enabled, q: q || undefined }, { limit, offset });
    },
  });

  addRoute(app, {
    method: 'POST', url: '/api/v1/targets', auth: 'user', scope: 'targets:write', tags: TAGS, errors: [403],
    summary: 'Create a target',
    description: `Answers 201 with \`Location: /api/v1/targets/{id}\` and the full target. Counted against the account's \`max_targets\` (and \`max_flow_checks\` for a flow). ${MONITOR_ERRORS_TEXT} ${WRITE_SOURCE_TEXT}`,
    body: CreateTargetBody,
    // A manual monitor's fixed interval before the schema's bound on intervals (see refuseManualInterval).
    beforeValidation: async (request) => {
      if (checkTypeOf(request.body) === 'manual' && isObject(request.body)) refuseManualInterval(request.body.interval);
    },
    location: '/api/v1/targets', response: { 201: Target },
    handler: async (request) => createTarget(ctx(request), request.body),
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id', auth: 'user', scope: 'targets:read', tags: TAGS,
    summary: 'Get a target', params: IdParams,
    response: { 200: Target },
    handler: async (request) => getTargetInOrg(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PATCH', url: '/api/v1/targets/:id', auth: 'user', scope: 'targets:write', tags: TAGS, errors: [403],
    summary: 'Update a target',
    description: `Only the fields sent change. A \`check\` must keep the stored \`type\` (400 \`CHECK_KIND_IMMUTABLE\` with \`field: check.type\`, answered before the rest of the body is validated, so also for an incomplete check of another kind; an unknown or read-only key still wins, 422 \`INVALID_JSON\`) and replaces the stored check whole; leave \`check\` out to keep stored credentials. A credential containing \`***\` is 400 \`REDACTION_SENTINEL\`. ${MONITOR_ERRORS_TEXT} ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PatchTargetBody,
    // The kind's rules before the body schema (see checkPatchKind). A malformed id is left to the params schema (404).
    beforeValidation: async (request) => {
      const type = checkTypeOf(request.body);
      const interval = isObject(request.body) ? request.body.interval : undefined;
      const { id } = request.params as { id: string };
      if ((type !== undefined || interval !== undefined) && isUuid(id)) await checkPatchKind(ctx(request), id, { type, interval });
    },
    response: { 200: Target },
    handler: async (request) => patchTarget(ctx(request), request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: '/api/v1/targets/:id', auth: 'user', scope: 'targets:delete', tags: TAGS,
    summary: 'Delete a target', params: IdParams,
    description: 'Answers 204; its ping URL, sub-routes and history go with it. An open incident of the monitor ends with the delete (its timeline says `closed`: "the monitor was deleted"). No recovery notice goes, as the monitor did not recover: an alert it raised stays open in the receiver until someone closes it there.',
    response: { 204: null },
    handler: async (request, reply) => {
      await deleteTarget(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/regions', auth: 'user', scope: 'targets:read', tags: TAGS,
    summary: 'The regions a target probes from',
    description: "The regions that serve it now, as the scheduler hands it out: its stored regions still enabled, cut to the plan's `max_regions` (default-selected first, then by id), in stored order. A region the plan drops is left out; none left means the target is unmonitored. The target's own `regions` field keeps the stored set.",
    params: IdParams,
    response: { 200: TargetRegions },
    handler: async (request) => getTargetRegions(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PUT', url: '/api/v1/targets/:id/regions', auth: 'user', scope: 'targets:write', tags: TAGS,
    summary: 'Set the regions a target probes from',
    description: `Enabled region ids (422 \`REGION_INVALID\`), at least one and at most the plan's \`max_regions\` (422 \`QUOTA_EXCEEDED\`); none on heartbeat and manual monitors; a flow monitor's regions need a flow-capable agent (422 \`NO_FLOW_CAPABLE_AGENT\`). ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PutRegionsBody,
    response: { 200: TargetRegions },
    handler: async (request) => putTargetRegions(ctx(request), request.params.id, request.body.regions),
  });

  registerTagRoutes(app, services);
}
