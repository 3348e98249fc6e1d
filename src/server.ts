// `keepwatch serve`: services, the app, the metrics listener, graceful shutdown.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { startCheckEngine } from './checks/index.js';
import { cfg, type Config } from './config/load.js';
import { startHeartbeatEvaluation } from './heartbeat/index.js';
import { Metrics } from './http/metrics.js';
import { NotificationWorker } from './notifications/index.js';
import { startHoldSweep } from './plans/holds.js';
import { startHistorySweep } from './results/index.js';
import { startStoreUpkeep } from './db/upkeep.js';
import { tuneProcessMemory } from './process-memory.js';
import { createServices } from './services.js';
import { Refusal } from './shared/refusal.js';

/** A listener that could not bind; `key` is the configuration key to change (`http.port`, `metrics.port`). */
export class ListenError extends Refusal {
  constructor(readonly key: string, address: string, cause: unknown) {
    const code = (cause as { code?: string }).code;
    super(`${key}: cannot listen on ${address}: ${code === 'EADDRINUSE' ? 'the address is already in use' : (cause as Error).message}${code ? ` (${code})` : ''}`, { cause });
    this.name = 'ListenError';
  }
}

/** Binds one listener, naming the key to change when it cannot. */
async function listenOn(key: string, server: FastifyInstance, port: number, host: string): Promise<void> {
  try {
    await server.listen({ port, host });
  } catch (err) {
    throw new ListenError(key, host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`, err);
  }
}

export async function serve(config: Config): Promise<void> {
  tuneProcessMemory();
  const services = await createServices(config);
  const metrics = cfg.bool(config, 'metrics.enabled') ? new Metrics() : undefined;
  const app = await buildApp(services, { metrics });
  const metricsServer = metrics?.server(services.log as FastifyBaseLogger);
  // Every listener or none: a node answering /healthz without its engine would look alive to its
  // supervisor while doing no work. Nothing else has started yet, so closing these lets the process exit.
  try {
    await listenOn('http.port', app, cfg.int(config, 'http.port'), cfg.str(config, 'http.host'));
    if (metricsServer) await listenOn('metrics.port', metricsServer, cfg.int(config, 'metrics.port'), cfg.str(config, 'metrics.host'));
  } catch (err) {
    await Promise.all([app.close(), metricsServer?.close()]);
    await services.close();
    throw err;
  }
  const engine = cfg.bool(config, 'checker.enabled') ? await startCheckEngine(services, metrics ? { registry: metrics.registry } : {}) : undefined;
  const sweep = startHistorySweep(services);
  const upkeep = startStoreUpkeep(services);
  const holds = startHoldSweep(services);
  // Judging heartbeat silence is scheduled checking too: an API-only node leaves it to the others.
  const heartbeats = engine ? startHeartbeatEvaluation(services) : undefined;
  const notifications = new NotificationWorker(services, { leaseMs: cfg.int(services.config, 'notifications.lease_secs') * 1000 });
  notifications.start();
  services.log.info({ store: services.db.kind, data_dir: services.dataDir, checks: engine ? 'on' : 'off' }, 'keepwatch is serving');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    services.log.info({ signal }, 'shutting down');
    await app.close();
    sweep.stop();
    await upkeep.stop();
    await holds.stop();
    await heartbeats?.stop();
    await notifications.stop();
    await engine?.stop();
    await metricsServer?.close();
    await services.close();
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
