import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cfg } from '../config/load.js';
import { addRoute, IdParams } from '../http/route.js';
import { WRITE_SOURCE_TEXT, writeSourceOf } from '../http/write-source.js';
import type { Services } from '../services.js';
import { answerPing } from './ping-endpoint.js';
import { HeartbeatRecord, PingParams, RotateBody, SignalPingParams } from './schema.js';
import { getHeartbeatRecord, revokePreviousUrl, rotateHeartbeat, type HeartbeatCtx } from './service.js';

const TAGS = ['heartbeat'];

/** `OK` as text/plain (Fastify takes a response schema per content type in this shape). */
const PingAnswer = { description: 'The ping is committed.', content: { 'text/plain': { schema: Type.String({ enum: ['OK\n'] }) } } } as unknown as TSchema;

const PING_DESCRIPTION = `Called by the job on every run, with GET or POST, no authentication. The path after the token:
none or \`/success\` (a clean finish: clears a failure, restarts the silence clock), \`/start\` (a run began; pairs with the finish
for a duration and \`max_runtime\`), \`/fail\` (down at once), \`/{0..255}\` (an exit status: 0 is a success, any other a failure
carrying it). Anything else, and an unknown or revoked token, is the same 404.

200 \`OK\` is sent once the ping is committed. A POST body is that run's output: its first 4 KiB are kept (a failure's shows as
the record's \`last_failure_output\`); reading stops past 256 KiB or after 10 s, and such a body keeps no output while the ping still
counts. Each token takes 1 ping per second with a burst of 10 (all signals together); beyond it 429 \`RATE_LIMITED\` with
\`Retry-After\`. HEAD is not a ping. A ping that reaches the store after a newer one of the same monitor (concurrent
commits) is logged but judges nothing: the newest ping has the last word.

While the monitor is paused or held, pings answer 200 and are logged but judge nothing: no state change, no result, no
incident; when it runs again, a monitor pinged before gets a full period + grace.`;

export function registerHeartbeatRoutes(app: FastifyInstance, services: Services): void {
  const ctx = (request: FastifyRequest): HeartbeatCtx => {
    const { actor, org } = request.auth!;
    return { db: services.db, clock: services.clock, actor, org: org!, sealer: services.sealer, publicBaseUrl: cfg.str(services.config, 'auth.public_base_url'), writeSource: writeSourceOf(request) };
  };

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/heartbeat', auth: 'user', scope: 'targets:write', tags: TAGS,
    summary: "A heartbeat monitor's record",
    description: 'The ping URL, state of the pings and cadence advice. Needs `targets:write` (the URL is a credential). 404 on any other kind of monitor.',
    params: IdParams,
    response: { 200: HeartbeatRecord },
    handler: async (request) => getHeartbeatRecord(ctx(request), request.params.id),
  });

  addRoute(app, {
    method: 'POST', url: '/api/v1/targets/:id/heartbeat/rotate', auth: 'user', scope: 'targets:write', tags: TAGS,
    summary: 'Mint a replacement ping URL',
    description: `JSON body required; \`{}\` is an ordinary rotation: the replaced URL keeps working (and counting) for 24 hours, shown by \`previous_url_expires_at\` and \`previous_url_last_used_at\`. A URL replaced by an earlier rotation keeps its own 24 hours too (the record shows the latest replaced one). With \`revoke_previous_immediately: true\` every replaced URL answers 404 from this commit. Incidents, history, share links, status page bindings and the silence clock are left alone. Audited \`target.heartbeat_rotated\`. On the target, ${WRITE_SOURCE_TEXT}`,
    params: IdParams, body: RotateBody,
    response: { 200: HeartbeatRecord },
    handler: async (request) => rotateHeartbeat(ctx(request), request.params.id, request.body),
  });

  addRoute(app, {
    method: 'DELETE', url: '/api/v1/targets/:id/heartbeat/previous', auth: 'user', scope: 'targets:write', tags: TAGS,
    summary: 'End every rotation overlap now',
    description: `Every replaced ping URL answers 404 from this commit. Idempotent: 204 also when there is no overlap (which writes nothing). On the target, ${WRITE_SOURCE_TEXT}`,
    params: IdParams,
    response: { 204: null },
    handler: async (request, reply) => {
      await revokePreviousUrl(ctx(request), request.params.id);
      return reply.code(204).send();
    },
  });

  // The HTTP server answers pings before Fastify (ping-endpoint.ts); these routes document them and
  // answer `inject`, through the same function. They read their own body, so their scope parses none.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      await answerPing(services, request.raw, reply.raw, request.id);
    };
    for (const [method, url] of (['GET', 'POST'] as const).flatMap((m) => [[m, '/ping/:token'], [m, '/ping/:token/:signal']] as const)) {
      addRoute(scope, {
        method, url, auth: 'public', tags: TAGS, exposeHeadRoute: false,
        summary: url.endsWith(':signal') ? 'Heartbeat ping with a signal' : 'Heartbeat ping (success)',
        description: PING_DESCRIPTION,
        params: url.endsWith(':signal') ? SignalPingParams : PingParams,
        response: { 200: PingAnswer },
        errors: [404, 429],
        handler,
      });
    }
  });
}
