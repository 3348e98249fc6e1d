import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import { ListResultsQuery, ResultList } from './schema.js';
import { listResults } from './service.js';
import { ByRegionQuery, LatencyByRegionReport, LatencyReport, StatsQuery, UptimeReport } from './stats-schema.js';
import { getLatency, getLatencyByRegion, getUptime, type StatsCtx } from './stats.js';

export function registerResultRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/results', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's check results",
    description: "Newest first, every region unless `region` names one. History older than the plan's `retention_days` is not readable: `from` is raised to it. Raw results are kept `raw_days`, and each region's newest one older than that too (its status stands until the next: a range read from raw results starts from it). `from` after `to` is 400 `VALIDATION_FAILED`.",
    params: IdParams, querystring: ListResultsQuery,
    response: { 200: ResultList },
    handler: async (request) => {
      const { org, plan } = request.auth!;
      return listResults({ db: services.db, clock: services.clock, orgId: org!.id, plan: plan! }, request.params.id, request.query);
    },
  });

  const statsCtx = (auth: NonNullable<FastifyRequest['auth']>): StatsCtx => ({ db: services.db, clock: services.clock, orgId: auth.org!.id, plan: auth.plan! });
  const RANGE = 'The range defaults to the last 24 hours, ends no later than now, and starts no earlier than the plan\'s `retention_days` allow; `from` after `to` is 400 `VALIDATION_FAILED`.';

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/uptime', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's uptime over a range",
    description: `Time-based: what counts as down is described on the answer's schema. ${RANGE}`,
    params: IdParams, querystring: StatsQuery,
    response: { 200: UptimeReport },
    handler: (request) => getUptime(statsCtx(request.auth!), request.params.id, request.query),
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/latency', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's latency series",
    description: `Bucketed over the range, with p50/p90/p95/p99, mean, min and max and per-phase means for the whole range and per bucket. Latency is \`duration_ms\` of \`up\` and \`degraded\` results (a failed check's time is its timeout, not a latency). ${RANGE}`,
    params: IdParams, querystring: StatsQuery,
    response: { 200: LatencyReport },
    handler: (request) => getLatency(statsCtx(request.auth!), request.params.id, request.query),
  });

  addRoute(app, {
    method: 'GET', url: '/api/v1/targets/:id/latency/by-region', auth: 'user', scope: 'targets:read', tags: ['targets'],
    summary: "A monitor's latency series per region",
    description: `As \`/latency\`, one series per region. ${RANGE}`,
    params: IdParams, querystring: ByRegionQuery,
    response: { 200: LatencyByRegionReport },
    handler: (request) => getLatencyByRegion(statsCtx(request.auth!), request.params.id, request.query),
  });
}
