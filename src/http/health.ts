import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { addRoute } from './route.js';

const READY_TIMEOUT_MS = 2_000;

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/healthz', auth: 'public', tags: ['health'],
    summary: 'Liveness: 200 once the process is up',
    response: { 200: Type.Object({ status: Type.Literal('ok') }) },
    handler: async () => ({ status: 'ok' as const }),
  });

  addRoute(app, {
    method: 'GET', url: '/readyz', auth: 'public', tags: ['health'], errors: [503],
    summary: 'Readiness: pings the store; 503 when it is unreachable',
    response: { 200: Type.Object({ status: Type.Literal('ready') }) },
    handler: async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('store ping timed out')), READY_TIMEOUT_MS); });
      try {
        await Promise.race([services.db.query('SELECT 1'), timeout]);
      } catch {
        throw new AppError(503, 'SERVICE_UNAVAILABLE', 'the store is unreachable');
      } finally {
        clearTimeout(timer);
      }
      return { status: 'ready' as const };
    },
  });
}
