// Prometheus metrics: request counts and latencies by route, on their own listener.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'keepwatch_http_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'keepwatch_http_request_duration_seconds', help: 'HTTP request latency by route', labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'keepwatch_' });
  }

  /** Records one answered request under its route pattern (never the raw URL: ids would explode the label set). */
  observe(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status });
    this.latency.observe({ method, route }, seconds);
  }

  /** With `log`, the listener logs its address as the API's does (requests are not logged). */
  server(log?: FastifyBaseLogger): FastifyInstance {
    const app = Fastify(log
      ? { loggerInstance: log.child({ listener: 'metrics' }), logController: new LogController({ disableRequestLogging: true }) }
      : { logger: false });
    app.get('/metrics', async (_request, reply) => reply.type(this.registry.contentType).send(await this.registry.metrics()));
    return app;
  }
}
