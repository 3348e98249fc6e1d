// `buildApp(services)`: the one Fastify app that `keepwatch serve` and the tests run.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installAuth } from './http/auth.js';
import { installConventions } from './http/conventions.js';
import { installErrorHandling, onFrameworkError } from './http/error-handler.js';
import { registerHealthRoutes } from './http/health.js';
import type { Metrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { validatorCompiler } from './http/validation.js';
import { registerIdentityRoutes } from './identity/routes.js';
import { registerOperatorRoutes } from './operator/routes.js';
import { registerRegionRoutes } from './regions/routes.js';
import { registerChannelRoutes } from './channels/index.js';
import { registerCheckRoutes } from './checks/index.js';
import { registerDashboardRoutes } from './dashboard/index.js';
import { registerAlertActionRoutes, registerIncidentRoutes } from './incidents/index.js';
import { registerMaintenanceRoutes } from './maintenance/index.js';
import { registerNotificationRoutes } from './notifications/index.js';
import { registerManualRoutes } from './manual/index.js';
import { registerHeartbeatRoutes } from './heartbeat/index.js';
import { registerResultRoutes } from './results/index.js';
import { registerTargetRoutes } from './targets/index.js';
import { registerVariableRoutes } from './variables/index.js';
import type { Services } from './services.js';
import { cfg } from './config/load.js';
import { VERSION } from './version.js';

export interface AppOptions { metrics?: Metrics }

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: onFrameworkError,
    trustProxy: cfg.bool(services.config, 'http.trust_proxy'),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // A per-request child logger costs a few microseconds; at level silent it could never write a line.
    childLoggerFactory: (logger, bindings, options) => (logger.level === 'silent' ? logger : logger.child(bindings, options)),
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
    routerOptions: { ignoreTrailingSlash: false },
  });
  app.setValidatorCompiler(validatorCompiler);
  if (services.log.isLevelEnabled('info')) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ method: request.method, route: request.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    });
  }
  options.metrics?.instrument(app);
  installErrorHandling(app);
  installConventions(app);
  installAuth(app, services);
  await installOpenApi(app, VERSION);

  registerHealthRoutes(app, services);
  registerIdentityRoutes(app, services);
  registerRegionRoutes(app, services);
  registerVariableRoutes(app, services);
  registerTargetRoutes(app, services);
  registerManualRoutes(app, services);
  registerHeartbeatRoutes(app, services);
  registerCheckRoutes(app, services);
  registerResultRoutes(app, services);
  registerChannelRoutes(app, services);
  registerMaintenanceRoutes(app, services);
  registerIncidentRoutes(app, services);
  registerAlertActionRoutes(app, services);
  registerNotificationRoutes(app, services);
  registerDashboardRoutes(app, services);
  registerOperatorRoutes(app, services);
  return app;
}
