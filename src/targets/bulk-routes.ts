// Routes that write many monitors at once: bulk create, duplicate, bulk actions.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { idempotencyKeyOf, idempotent } from '../http/idempotency.js';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT } from '../http/write-source.js';
import type { Services } from '../services.js';
import { BulkActionBody, BulkActionResult, checkBulkActionScope, runBulkAction } from './bulk-action.js';
import { BULK_CREATE_MAX, bulkCreateTargets } from './bulk.js';
import { DUPLICATE_MAX, insertDuplicates, prepareDuplicate } from './duplicate.js';
import { targetsCtx } from './routes.js';
import { CreateTargetBody, Target, TargetName } from './schema.js';
import { MONITOR_ERRORS_TEXT } from './error-texts.js';

const TAGS = ['targets'];
const BULK_BODY_LIMIT = 64 * 1024 * 1024;
const BULK_ACTION_URL = '/api/v1/targets/bulk-action';

const TargetBatch = Type.Object({
  targets: Type.Array(Target, { description: 'In request order.' }),
});

export function registerBulkRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'POST', url: '/api/v1/targets/bulk', auth: 'user', scope: 'targets:write', tags: TAGS, errors: [403, 413],
    summary: 'Create many targets at once',
    description: `Up to ${BULK_CREATE_MAX} targets (more is 413 \`BULK_TOO_LARGE\`), each with the fields and rules of a single create; an item without \`regions\` gets the default set. All or nothing: an error names the item (\`targets[3].check.url\`), and a batch without room for all of it is 422 \`QUOTA_EXCEEDED\`. Heartbeat monitors get their ping URLs in the same transaction. Answers 201 \`{targets}\` in request order. Bodies up to 64 MiB. ${MONITOR_ERRORS_TEXT} ${WRITE_SOURCE_TEXT}`,
    body: Type.Object({ targets: Type.Array(CreateTargetBody, { minItems: 1 }) }, { additionalProperties: false }),
    bodyLimit: BULK_BODY_LIMIT,
    response: { 201: TargetBatch },
    handler: async (request, reply) => reply.code(201).send(await bulkCreateTargets(targetsCtx(services, request), request.body.targets)),
  });

  addRoute(app, {
    method: 'POST', url: '/api/v1/targets/:id/duplicate', auth: 'user', scope: 'targets:write', tags: TAGS, errors: [409, 413],
    summary: 'Copy a target',
    idempotencyKey: true,
    description: `Up to ${DUPLICATE_MAX} copies (more is 413 \`BULK_TOO_LARGE\`), each \`{name, address?}\`. \`address\` replaces the check's URL (http; a flow's \`start_url\`), host or \`host:port\` (tcp, tls_cert; a bare host keeps the port), host (ping) or domain (dns, domain_expiry); heartbeat and manual monitors take none (400 \`INVALID_ADDRESS\`). A new address meets the check's rules as on create (400 \`VALIDATION_FAILED\`, \`INVALID_IP_VERSION\`, \`URL_PATTERN_BLOCKED\` or \`DOMAIN_DENYLISTED\`, naming \`copies[i].address\`). Everything else is copied from the stored monitor (check with credentials, interval, paused state, tags, group, alert bindings, regions and \`region_policy\` as stored); the caller owns every copy; a heartbeat copy gets its own ping URL. All or nothing: an error names the copy (\`copies[1].address\`); no room is 422 \`QUOTA_EXCEEDED\`; flow copies beyond the plan's flow checks are 400 \`INVALID_FLOW_PARAMS\` (Duplicate rule 3, also when the cap is 0), and a flow copy whose regions have no flow-capable agent 422 \`NO_FLOW_CAPABLE_AGENT\` naming \`copies[i].regions\`. Answers 201 \`{targets}\` in request order. With \`Idempotency-Key\` (1-255 visible ASCII characters, kept 24 hours per org) a retry answers the first answer again and copies nothing more; the same key with another request is 409 \`CONFLICT\`. ${WRITE_SOURCE_TEXT}`,
    params: IdParams,
    body: Type.Object({
      copies: Type.Array(Type.Object({
        name: TargetName,
        // Blank is an address too: a heartbeat or manual copy naming one is INVALID_ADDRESS, any other a bad address.
        address: Type.Optional(Type.String({ maxLength: 2048 })),
      }, { additionalProperties: false }), { minItems: 1 }),
    }, { additionalProperties: false }),
    response: { 201: TargetBatch },
    handler: async (request, reply) => {
      const ctx = targetsCtx(services, request);
      const { id } = request.params;
      const answer = await idempotent(services.db, services.clock,
        { orgId: ctx.org.id, key: idempotencyKeyOf(request), request: { method: request.method, url: request.url, body: request.body } },
        () => prepareDuplicate(ctx, id, request.body.copies),
        async (tx, items) => ({ status: 201, body: await insertDuplicates(tx, ctx, id, items) }));
      if (answer.replayed) void reply.header('idempotent-replayed', 'true');
      return reply.code(answer.status).send(answer.body);
    },
  });

  addRoute(app, {
    method: 'POST', url: BULK_ACTION_URL, auth: 'user', tags: TAGS, errors: [404],
    summary: 'One action on many targets',
    description: `Needs the scope \`targets:delete\` for \`delete\` and \`targets:write\` for every other action (service-api.md: \`targets:delete\` covers bulk delete, \`targets:write\` bulk writes); a token without it is 403 \`INSUFFICIENT_SCOPE\` naming the scope. \`enable\`, \`disable\`, \`delete\`, \`tag-add\` / \`tag-remove\` (\`tags\`), \`set-group\` (\`group_name\`, null clears), \`set-interval\` (\`interval\`), \`bind-channels\` / \`unbind-channels\` (\`channel_ids\`), on up to ${BULK_CREATE_MAX} \`ids\`. Each monitor's new values pass the rules of a PATCH. All or nothing: an id that is not a monitor of the org is 404 naming it (\`ids[2]\`), a monitor the action cannot apply to names it the same way (e.g. 422 \`MIN_CHECK_INTERVAL\` at \`ids[0]\`), bad action inputs name themselves (\`tags[1]\`, \`channel_ids[0]\`). Answers 200 \`{targets}\` in \`ids\` order, or \`{deleted: [ids]}\` for \`delete\`. ${WRITE_SOURCE_TEXT}`,
    body: BulkActionBody,
    bodyLimit: BULK_BODY_LIMIT,
    // The scope depends on the action (a route declares one scope): checked after auth, before the body's validation.
    beforeValidation: async (request) => checkBulkActionScope(request.auth!.principal.scopes, request.body),
    response: { 200: BulkActionResult },
    handler: async (request) => runBulkAction(targetsCtx(services, request), request.body),
  });
}
