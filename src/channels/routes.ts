import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HtmlPage, page } from '../http/html-page.js';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import { cfg } from '../config/load.js';
import { escapeHtml } from '../mail/mailer.js';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { Type } from '@sinclair/typebox';
import { Channel, ChannelList, CreateChannelBody, ListChannelsQuery, PatchChannelBody, TestChannelBody, TestSendResult } from './schema.js';
import { createChannel, deleteChannel, getChannelInOrg, listChannels, patchChannel, resendVerification, type ChannelsCtx } from './service.js';
import { confirmVerification, lookupVerification, VERIFY_PATH } from './verification.js';
import { testSavedChannel, testUnsavedConfig } from './test-send.js';

const TAGS = ['notification-channels'];
const BASE = '/api/v1/notification-channels';

export function registerChannelRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): ChannelsCtx => {
    const { actor, org, plan } = request.auth!;
    return {
      db: services.db, actor, org: org!, plan: plan!, plans: services.plans, sealer: services.sealer, guard: services.guard,
      writeSource: writeSourceOf(request),
      verification: {
        mailer: services.mailer, publicBaseUrl: cfg.str(services.config, 'auth.public_base_url'), clock: services.clock,
        onError: (err) => services.log.warn({ err }, 'verification mail failed; resend-verification tries again'),
      },
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
    location: BASE, response: { 201: Channel },
    handler: async (request) => createChannel(ctx(request), request.body),
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

  const TEST_TEXT = 'A synthetic alert (`"test": true` in a webhook body, `[Test]` before a chat headline) through the same delivery path as real ones; answers 200 with `delivered` and the `error` when the receiver did not take it. Nothing is stored. Counted against `test_now_per_minute`. Email goes only where alerts would: a saved email channel once its own mailed link was followed (confirmation is per channel, as its alerts need), an unsaved config to an address some confirmed email channel of the org holds (ignoring case); otherwise nothing is sent and the answer is `delivered: false` saying so.';

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

  registerVerifyPage(app, services);
}

const VerifyParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
const GONE = '<p>This confirmation link is unknown, already used or expired (links last 7 days). Ask for a new one with <i>resend verification</i> on the channel.</p>';

/** An unknown, used or expired link is a page too; anything else goes to the error handler. */
function gonePage(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof AppError && err.status === 404) return page(reply, 404, 'Link not found', GONE);
  throw err;
}

/** The page behind the mailed link: GET names the channel with a button, the button's POST confirms. */
function registerVerifyPage(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    // The button is an HTML form: it posts an empty urlencoded body, which this page ignores.
    scope.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null, undefined));

    addRoute(scope, {
      method: 'GET', url: `${VERIFY_PATH}/:token`, auth: 'public', tags: TAGS,
      summary: 'Email channel confirmation link (page)',
      description: 'The link mailed to an email channel\'s address: an HTML page naming the channel and the address with a "Confirm this address" button (which POSTs to the same URL). Fetching it changes nothing, so mail scanners and link previews confirm nothing. An unknown, used or expired (7 days) link is a 404 page.',
      params: VerifyParams,
      response: { 200: HtmlPage, 404: HtmlPage },
      handler: async (request, reply) => {
        try {
          const target = await lookupVerification(services.db, request.params.token, services.clock.now());
          return page(reply, 200, `Confirm alerts for ${target.name}`,
            `<p>Keepwatch alerts for <b>${escapeHtml(target.name)}</b> will be sent to <b>${escapeHtml(target.address)}</b> once you confirm this address.</p>` +
            '<form method="post"><button type="submit" style="font-size:1.1rem;padding:.5rem 1.2rem">Confirm this address</button></form>' +
            '<p>If you did not expect this, close this page: nothing is sent until the address is confirmed.</p>');
        } catch (err) {
          return gonePage(reply, err);
        }
      },
    });

    addRoute(scope, {
      method: 'POST', url: `${VERIFY_PATH}/:token`, auth: 'public', tags: TAGS,
      summary: 'Email channel confirmation link (confirm)',
      description: 'The button of the confirmation page: confirms the address, and the channel starts paging; the link is then used. Takes an empty body (the form\'s `application/x-www-form-urlencoded`, or none) and answers an HTML page. An unknown, used or expired (7 days) link is a 404 page.',
      params: VerifyParams,
      response: { 200: HtmlPage, 404: HtmlPage },
      handler: async (request, reply) => {
        try {
          const done = await confirmVerification(services.db, request.params.token, services.clock.now());
          return page(reply, 200, `Confirmed: ${done.name}`,
            `<p>Confirmed. Alerts for ${escapeHtml(done.name)} will now be sent to ${escapeHtml(done.address)}.</p>`);
        } catch (err) {
          return gonePage(reply, err);
        }
      },
    });
  });
}
