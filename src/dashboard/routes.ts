import type { FastifyInstance } from 'fastify';
import { addRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { DashboardSummary } from './schema.js';
import { computeSummary, DASHBOARD_CACHE_MS, SummaryCache } from './service.js';

export function registerDashboardRoutes(app: FastifyInstance, services: Services): void {
  // One cache per app: keyed by org id, timed by the injected clock.
  const cache = new SummaryCache(services.clock);

  addRoute(app, {
    method: 'GET', url: '/api/v1/dashboard/summary', auth: 'user', scope: 'targets:read', tags: ['dashboard'],
    summary: "The org's rollup",
    description: `Counts of the org's targets: total, enabled, paused (\`enabled: false\`), held by the service, and per check kind (all nine, 0 when none) and per state (the latest result's status, or \`pending\`). Computed at most once per ${DASHBOARD_CACHE_MS / 1000} s per org and served from a server-side cache in between, so a change can take up to ${DASHBOARD_CACHE_MS / 1000} s to show; \`Cache-Control: private, max-age=${DASHBOARD_CACHE_MS / 1000}\`.`,
    response: { 200: DashboardSummary },
    handler: async (request) => {
      const orgId = request.auth!.org!.id;
      return cache.get(orgId, () => computeSummary(services.db, orgId));
    },
  });
}
