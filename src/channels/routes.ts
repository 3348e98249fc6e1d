import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import { cfg } from '../config/load.js';
import type { Services } from '../services.js';
import { Type } from '@sinclair/typebox';
import { Channel, ChannelList, CreateChannelBody, ListChannelsQuery, PatchChannelBody, TestChannelBody, TestSendResult } from './schema.js';
import { createChannel, deleteChannel, getChannelInOrg, listChannels, patchChannel, resendVerification, type ChannelsCtx } from './service.js';
import { confirmVerification, VERIFY_PATH } from './verification.js';
import { testSavedChannel, testUnsavedConfig } from './test-send.js';

const TAGS = ['notification-channels'];
const BASE = '/api/v1/notification-channels';

export function registerChannelRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): ChannelsCtx => {
    const { actor, org, userId, plan } = request.auth!;
    const accountId = org!.accountId;
    return {
      db: services.db, actor, org: org!, plan: plan!, plans: services.plans, sealer: services.sealer, guard: services.guard,
      writeSource: writeSourceOf(request),
      verification: {
        mailer: services.mailer, publicBaseUrl: cfg.str(services.config, 'auth.public_base_url'), clock: services.clock,
        onError: (err) => services.log.warn({ err }, 'verification mail failed; resend-verification tries again'),
      },
      onQuotaExceeded: (quota, details) => services.quotaEvents.push({ event: 'quota_exceeded', quota, accountId, userId, ip: request.ip, details }),
    };
  };

  addRoute(app, {
    method: 'GET', url: BASE, auth: 'user', scope: 'channels:read', tags: TAGS,
    summary: "List the org's notification channels", description: 'Oldest first. Secrets read back as `***`.',
    querystring: ListChannelsQuery,
    response: { 200: ChannelList },
    handler: async (request) => listChannels(ctx(request), { limit: request.query.limit ?? 50, offset: request.query.offset ?? 0 }),
  });

  addRoute(app, {
    method: 'POST', url: BASE, auth: 'user', scope: 'channels:write', tags: TAGS, errors: [403],
    summary: 'Create a notification channel',
    description: `Answers 201 with \`Location\`. Counted against the account's \`max_notification_channels\` (422 \`QUOTA_EXCEEDED\`). An \`sms\` channel on a plan without SMS alerts is 403 \`SMS_ALERTS_DISABLED\`. A URL in a blocked address range is 400 \`VALIDATION_FAILED\` unless the deployment allows private targets. ${WRITE_SOURCE_TEXT}`,
    body: CreateChannelBody,
    response: { 201: Channel },
    handler: async (request, reply) => {
      const channel = await createChannel(ctx(request), request.body);
      return reply.code(201).header('location', `${BASE}/${channel.id}`).send(channel);
    },
  });

  addRoute(app, {
    method: 'GET', url: `${BASE}/:id`, auth: 'user', scope: 'channels:read', tags: TAGS,
    summary: 'Get a notification channel', params: IdParams,
    response: { 200: Channel },
    handler: async (request) => getChannelInOrg(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'PATCH', url: `${BASE}/:id`, auth: 'user', scope: 'channels:write', tags: TAGS, errors: [403],
    summary: 'Update a notification channel',
    description: `Only the fields sent change. A \`config\` replaces the stored one whole (its type may change; to \`sms\` only on a plan with SMS alerts); a secret containing \`***\` (as a config read back shows it) is 400 \`REDACTION_SENTINEL\`, never taken as "keep": leave \`config\` out to keep stored secrets. An SMS channel made before a downgrade stays editable. ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: PatchChannelBody,
    response: { 200: Channel },
    handler: async (request) => patchChannel(ctx(request), request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: `${BASE}/:id`, auth: 'user', scope: 'channels:delete', tags: TAGS,
    summary: 'Delete a notification channel',
    description: 'Also removes its bindings from every monitor of the org, in the same transaction (those monitors\' `updated_at` and `write_source` are restamped).',
    params: IdParams,
    response: { 204: null },
    handler: async (request, reply) => {
      await deleteChannel(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });

  const TEST_TEXT = 'A synthetic alert (`"test": true` in a webhook body, `[Test]` before a chat headline) through the same delivery path as real ones; answers 200 with `delivered` and the `error` when the receiver did not take it. Nothing is stored.';

  addRoute(app, {
    method: 'POST', url: `${BASE}/test`, auth: 'user', scope: 'channels:execute', tags: TAGS, errors: [403],
    summary: 'Test an unsaved channel config',
    description: `Body \`{config}\`, held to the rules a create applies (\`***\` refused, SSRF guard, an \`sms\` config on a plan without SMS alerts 403 \`SMS_ALERTS_DISABLED\`). ${TEST_TEXT}`,
    body: TestChannelBody,
    response: { 200: TestSendResult },
    handler: async (request) => testUnsavedConfig({ ...ctx(request), deliverer: services.deliverer }, request.body.config),
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/test`, auth: 'user', scope: 'channels:execute', tags: TAGS,
    summary: 'Send a test alert through a saved channel',
    description: `With the stored secrets; another org's channel is 404. ${TEST_TEXT}`,
    params: IdParams,
    response: { 200: TestSendResult },
    handler: async (request) => testSavedChannel({ ...ctx(request), deliverer: services.deliverer }, request.params.id),
  });

  addRoute(app, {
    method: 'POST', url: `${BASE}/:id/resend-verification`, auth: 'user', scope: 'channels:write', tags: TAGS, errors: [409, 429],
    summary: 'Resend the verification mail of an email channel',
    description: 'A fresh link (the previous one stops working) to an unverified email channel; 204. A verified or non-email channel is 409 `CONFLICT`; more than one a minute is 429 `RATE_LIMITED` with `Retry-After`.',
    params: IdParams,
    response: { 204: Type.Null() },
    handler: async (request, reply) => {
      await resendVerification(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    method: 'GET', url: `${VERIFY_PATH}/:token`, auth: 'public', tags: TAGS,
    summary: 'Confirm an email channel (the mailed link)',
    description: 'The link mailed to an email channel\'s address; following it confirms the address and the channel starts paging. An unknown, used or expired (7 days) token is 404 `NOT_FOUND`.',
    params: Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) }),
    response: { 200: Type.Object({ channel_id: Type.String({ format: 'uuid' }), verified: Type.Literal(true) }, { additionalProperties: false }) },
    handler: async (request) => ({ channel_id: await confirmVerification(services.db, request.params.token, services.clock.now()), verified: true as const }),
  });
}
