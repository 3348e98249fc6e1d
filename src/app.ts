// `buildApp(services)`: the one Fastify app that `keepwatch serve` and the tests run.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { answerPing, isPingRequest } from './heartbeat/ping-endpoint.js';
import { installAllowedMethods, registerOptionsRoute } from './http/allowed-methods.js';
import { installAuth } from './http/auth.js';
import { installConventions } from './http/conventions.js';
import { installErrorHandling, onClientError, onFrameworkError } from './http/error-handler.js';
import { registerApiCatalog } from './http/api-catalog.js';
import { registerHealthRoutes } from './http/health.js';
import type { Metrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { validatorCompiler } from './http/validation.js';
import { registerIdentityRoutes } from './identity/routes.js';
import { registerOperatorRoutes } from './operator/routes.js';
import { registerBillingRoutes } from './billing/routes.js';
import { registerSupportRoutes } from './support/routes.js';
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
import { registerTargetRoutes, rotationCheckFor } from './targets/index.js';
import { registerVariableRoutes } from './variables/index.js';
import type { Services } from './services.js';
import { cfg } from './config/load.js';
import { VERSION } from './version.js';

export interface AppOptions { metrics?: Metrics }

/** Told of every answered request; null when nothing listens. */
type RequestObserver = ((request: { id: string; method: string; route: string; status: number; ms: number }) => void) | null;

function requestObserver(log: Logger, metrics: Metrics | undefined): RequestObserver {
  const logging = log.isLevelEnabled('info');
  if (!logging && !metrics) return null;
  return ({ id, method, route, status, ms }) => {
    if (logging) log.info({ reqId: id, method, route, status, ms: Math.round(ms) }, 'request');
    metrics?.observe(method, route, status, ms / 1000);
  };
}

/** How long a request may take to arrive, headers and body (Node answers 408 and closes after). */
export const REQUEST_TIMEOUT_MS = 120_000;

const requestIdOf = (req: IncomingMessage): string => (req.headers['x-request-id'] as string | undefined) ?? randomUUID();

/**
 * The HTTP server, as Fastify would make it, answering heartbeat pings itself (the hottest route:
 * see ping-endpoint.ts) and handing every other request to Fastify.
 */
function serverAnsweringPings(services: Services, observe: RequestObserver) {
  return (fastifyHandler: RequestListener, options: FastifyServerOptions) => {
    const server = createServer((req, res) => {
      if (!isPingRequest(req.method, req.url)) return fastifyHandler(req, res);
      const id = requestIdOf(req);
      if (observe) {
        const started = performance.now();
        const route = req.url!.split('?', 1)[0]!.slice('/ping/'.length).includes('/') ? '/ping/:token/:signal' : '/ping/:token';
        res.once('finish', () => observe({ id, method: req.method!, route, status: res.statusCode, ms: performance.now() - started }));
      }
      void answerPing(services, req, res, id);
    });
    server.keepAliveTimeout = options.keepAliveTimeout!;
    server.requestTimeout = options.requestTimeout!;
    server.setTimeout(options.connectionTimeout!);
    return server;
  };
}

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const observe = requestObserver(services.log, options.metrics);
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: serverAnsweringPings(services, observe),
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    trustProxy: cfg.bool(services.config, 'http.trust_proxy'),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // A per-request child logger costs a few microseconds; at level silent it could never write a line.
    childLoggerFactory: (logger, bindings, options) => (logger.level === 'silent' ? logger : logger.child(bindings, options)),
    bodyLimit: 1024 * 1024,
    // A request must arrive whole within 2 minutes (a 64 MiB bulk body on a slow link included):
    // Fastify's default, none, let a body that never finishes hold its connection for good.
    requestTimeout: REQUEST_TIMEOUT_MS,
    ajv: { customOptions: { removeAdditional: false } },
    routerOptions: { ignoreTrailingSlash: false },
  });
  app.setValidatorCompiler(validatorCompiler);
  if (observe) {
    app.addHook('onResponse', async (request, reply) => {
      observe({ id: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: reply.elapsedTime });
    });
  }
  const allowedMethods = installAllowedMethods(app);
  installErrorHandling(app, (event) => services.quotaEvents.push(event), allowedMethods);
  installConventions(app);
  installAuth(app, services);
  registerOptionsRoute(app, allowedMethods);
  await installOpenApi(app, VERSION);

  registerHealthRoutes(app, services);
  registerApiCatalog(app, cfg.str(services.config, 'auth.public_base_url'));
  registerIdentityRoutes(app, services);
  registerRegionRoutes(app, services);
  registerVariableRoutes(app, services, rotationCheckFor(services));
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
  registerBillingRoutes(app);
  registerSupportRoutes(app, services);
  return app;
}
