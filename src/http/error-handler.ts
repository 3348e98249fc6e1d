// Maps every error to the CONTRACT.md envelope: {"error": {"code", "message", "field"?, ...}}.
// A 5xx logs its cause and answers a fixed message.
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type Rejection } from '../shared/errors.js';
import type { QuotaEvent } from '../plans/quota-events.js';
import { cacheControlFor } from './conventions.js';
import { unroutedError, type AllowedMethods } from './allowed-methods.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string; quota?: string; allowed?: string[] };
}

export function errorBody(err: AppError): ErrorBody {
  const { field, quota, allowed } = err.extra;
  return { error: { code: err.code, message: err.message, ...(field !== undefined && { field }), ...(quota && { quota }), ...(allowed && { allowed }) } };
}

/** Fastify's own errors, by code, as the spec's. */
function fromFastify(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(415, 'INVALID_CONTENT_TYPE', 'send the body as Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(400, 'INVALID_JSON', 'the body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError(400, 'INVALID_JSON', 'the body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'PAYLOAD_TOO_LARGE', 'the body is too large');
    case 'FST_ERR_NOT_FOUND':
      return new AppError(404, 'NOT_FOUND', 'route not found');
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new AppError(400, 'INVALID_JSON', 'the body is not valid JSON');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError(err.statusCode, err.statusCode === 404 ? 'NOT_FOUND' : 'VALIDATION_FAILED', err.message);
  }
  return undefined;
}

export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  if (err.extra.retryAfter !== undefined) reply.header('retry-after', String(err.extra.retryAfter));
  return reply.code(err.status).type('application/json; charset=utf-8').send(errorBody(err));
}

/**
 * Errors raised before routing (a malformed percent-encoding, an over-long path parameter): the path
 * names no resource. These skip the hooks, so the headers the hooks would add are set here.
 */
export function onFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new AppError(404, 'NOT_FOUND', 'route not found')
    : new AppError(400, 'VALIDATION_FAILED', 'the request could not be routed', { field: 'url' });
  const cacheControl = cacheControlFor(request.method, request.url);
  if (cacheControl) reply.header('cache-control', cacheControl);
  reply.header('x-request-id', request.id);
  void sendError(reply, known);
}

/**
 * What the HTTP parser refuses before a request exists (headers over the limit, a client too slow,
 * bytes that are not HTTP), by Node's error code. The errors list has no code for oversized headers;
 * PAYLOAD_TOO_LARGE is the nearest; other refusals get the generic VALIDATION_FAILED, as unnamed 4xx do above.
 */
function fromClientError(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'PAYLOAD_TOO_LARGE', 'the request headers are too large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError(413, 'PAYLOAD_TOO_LARGE', 'the chunk extensions of the body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'VALIDATION_FAILED', 'the request was not received in time');
    default:
      return new AppError(400, 'VALIDATION_FAILED', 'the request is not valid HTTP');
  }
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Content Too Large', 431: 'Request Header Fields Too Large' };

/**
 * Fastify's `clientErrorHandler`: the parser's refusals carry the same envelope as every other error.
 * No request was parsed, so no hook runs and the answer is written to the socket by hand, then closed.
 */
export function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has no one to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const known = fromClientError(err.code);
    const body = JSON.stringify(errorBody(known));
    socket.write(`HTTP/1.1 ${known.status} ${STATUS_TEXT[known.status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** Appends a refusal to `quota_events` (service-api.md, Events 6) without holding up the answer. */
export type RecordRejection = (event: QuotaEvent) => void;

/** Where a refusal was answered: the request's address and route, and its caller when known. */
export interface RefusedRequest { ip: string | undefined; method: string | undefined; route: string | null; accountId?: string; userId?: string }

/** The `quota_events` row of a refusal an error carries (the error's own ids win over the request's). */
export function rejectionEvent(rejection: Rejection, at: RefusedRequest): QuotaEvent {
  const { event, quota, details } = rejection;
  return {
    event, quota, ip: at.ip, accountId: rejection.accountId ?? at.accountId, userId: rejection.userId ?? at.userId,
    details: { ...details, method: at.method, route: at.route },
  };
}

/** Every quota or rate-limit refusal an answer carries, recorded here once, whichever code raised it. */
function recordRejection(record: RecordRejection, request: FastifyRequest, err: AppError): void {
  if (!err.extra.rejection) return;
  record(rejectionEvent(err.extra.rejection, {
    ip: request.ip, method: request.method, route: request.routeOptions.url ?? null,
    accountId: request.auth?.org?.accountId, userId: request.auth?.userId,
  }));
}

export function installErrorHandling(app: FastifyInstance, record: RecordRejection, allowed: AllowedMethods): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = err instanceof AppError ? err : fromFastify(err);
    if (known) {
      recordRejection(record, request, known);
      return sendError(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(reply, new AppError(500, 'INTERNAL', 'internal error'));
  });
  app.setNotFoundHandler((request, reply) => {
    const { error, allow } = unroutedError(allowed, request.url);
    if (allow) reply.header('allow', allow);
    return sendError(reply, error);
  });
}
