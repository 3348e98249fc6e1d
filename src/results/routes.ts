import type { FastifyInstance } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import { ListResultsQuery, ResultList } from './schema.js';
import { listResults } from './service.js';

export function registerResultRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/results', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's check results",
    description: "Newest first, every region unless `region` names one. History older than the plan's `retention_days` is not readable: `from` is raised to it. Raw results are kept `raw_days`. `from` after `to` is 400 `VALIDATION_FAILED`.",
    params: IdParams, querystring: ListResultsQuery,
    response: { 200: ResultList },
    handler: async (request) => {
      const { org, plan } = request.auth!;
      return listResults({ db: services.db, clock: services.clock, orgId: org!.id, plan: plan! }, request.params.id, request.query);
    },
  });
}
