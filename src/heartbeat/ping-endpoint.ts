// The ping endpoint (monitoring-api.md, "Heartbeat ping endpoint") on the bare request and response.
// It is the hottest route there is, so the HTTP server answers it ahead of Fastify's router, hooks
// and serialisers (`buildApp`'s server factory); the Fastify routes, which document it and serve
// `inject`, hand their requests to the same function. Its answers are the API's: the error envelope
// and `x-request-id`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorBody, rejectionEvent } from '../http/error-handler.js';
import { AppError } from '../shared/errors.js';
import type { QuotaEvent } from '../plans/quota-events.js';
import type { PingIngest } from './ingest.js';
import { readOutput } from './output.js';
import { pingTokenHash } from './ping-tokens.js';
import type { PingRateLimiter } from './rate-limit.js';
import { signalOfExitCode, type PingSignal } from './verdict.js';

export interface PingEndpointDeps { pings: PingIngest; pingLimiter: PingRateLimiter; log: Logger; quotaEvents: { push(event: QuotaEvent): void } }

/** A well-formed ping token: 32 random bytes in base64url. Anything else cannot match one. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const EXIT_CODE_RE = /^(0|[1-9][0-9]{0,2})$/;

/** Unknown token, revoked token, unknown segment: one answer, the same as an unknown route's. */
const noSuchPingUrl = (): AppError => new AppError(404, 'NOT_FOUND', 'route not found');

/** Whether a request is for the ping endpoint: GET or POST under `/ping/` (HEAD is not a ping). */
export const isPingRequest = (method: string | undefined, url: string | undefined): boolean =>
  (method === 'GET' || method === 'POST') && url !== undefined && url.startsWith('/ping/');

/** The signal a path segment names; null for one the endpoint does not know. */
export function parseSignal(segment: string | undefined): { signal: PingSignal; exitCode: number | null } | null {
  if (segment === undefined || segment === 'success') return { signal: 'success', exitCode: null };
  if (segment === 'start' || segment === 'fail') return { signal: segment, exitCode: null };
  if (!EXIT_CODE_RE.test(segment)) return null;
  const code = Number(segment);
  return code <= 255 ? { signal: signalOfExitCode(code), exitCode: code } : null;
}

/** `/ping/{token}[/{signal}]` (query string ignored, segments percent-decoded as the router would); null for any other shape. */
function pingPath(url: string): { token: string; segment: string | undefined } | null {
  const path = url.split('?', 1)[0]!.slice('/ping/'.length);
  let parts: string[];
  try {
    parts = path.split('/').map((part) => (part.includes('%') ? decodeURIComponent(part) : part));
  } catch {
    return null;
  }
  return parts.length <= 2 ? { token: parts[0]!, segment: parts[1] } : null;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers one ping request, errors included; never rejects. */
export async function answerPing(deps: PingEndpointDeps, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
  res.setHeader('x-request-id', requestId);
  try {
    const path = pingPath(req.url!);
    const signal = path && parseSignal(path.segment);
    if (!path || !signal || !TOKEN_RE.test(path.token)) throw noSuchPingUrl();
    const tokenHash = pingTokenHash(path.token);
    const waitSecs = deps.pingLimiter.take(tokenHash);
    if (waitSecs) {
      // A URL that names no heartbeat is 404 however often it is called: looked up (read only) on
      // this path alone, so the common ping pays nothing for it. Recorded with no account.
      if (!(await deps.pings.pingUrlExists(tokenHash))) throw noSuchPingUrl();
      throw new AppError(429, 'RATE_LIMITED', 'this ping URL takes 1 ping per second (burst 10)',
        { retryAfter: waitSecs, rejection: { event: 'rate_limited', quota: 'ping', details: {} } });
    }
    const body = req.method === 'POST' ? readOutput(req) : null;
    const outcome = await deps.pings.ping(tokenHash, signal.signal, signal.exitCode);
    if (!outcome) throw noSuchPingUrl();
    if (body) {
      const { output, complete } = await body;
      // An unread rest of the body cannot be skipped on a kept-alive connection.
      if (!complete) res.setHeader('connection', 'close');
      if (output) await deps.pings.output(outcome.pingId, output);
    }
    send(res, 200, 'text/plain; charset=utf-8', 'OK\n');
  } catch (err) {
    const known = err instanceof AppError ? err : new AppError(500, 'INTERNAL', 'internal error');
    // This route answers outside Fastify's error handler, so it records its own refusals, the same way.
    if (known.extra.rejection) {
      deps.quotaEvents.push(rejectionEvent(known.extra.rejection, { ip: req.socket.remoteAddress, method: req.method, route: '/ping/:token' }));
    }
    if (known.status >= 500 && !(err instanceof AppError)) deps.log.error({ err }, 'unhandled error');
    if (known.extra.retryAfter !== undefined) res.setHeader('retry-after', String(known.extra.retryAfter));
    if (!res.headersSent) send(res, known.status, 'application/json; charset=utf-8', JSON.stringify(errorBody(known)));
  }
}
