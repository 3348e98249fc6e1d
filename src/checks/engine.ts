// The check engine of one node: the scheduler with the built-in runner (region `local`), probes
// run with the connect-time guard, results into the batching writer; manual states are restated
// in transactions of their own. `keepwatch serve` starts it unless `checker.enabled` is false (an
// API-only node); tests start it when they need it.
import type { Registry } from 'prom-client';
import { cfg } from '../config/load.js';
import { restateManualState } from '../manual/index.js';
import { runProbe, type ProbeContext } from '../probes/index.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { Services } from '../services.js';
import { resolveVariableValues, type OrgVariables } from '../variables/index.js';
import { LOCAL_REGION } from '../regions/catalog.js';

/** How long an org's variable values serve scheduled checks before they are read again. */
const VARIABLES_TTL_MS = 30_000;

export function probeContextOf(services: Services): ProbeContext {
  return { guard: services.guard, rdap: services.rdap, rdapMaxInflight: cfg.int(services.config, 'checker.rdap_max_inflight') };
}

/** Org variable values for scheduled checks, read at most once per TTL per org (a rotation shows within it). */
class VariableValues {
  private readonly entries = new Map<string, { at: number; values: Promise<OrgVariables> }>();

  constructor(private readonly services: Services) {}

  get(orgId: string): Promise<OrgVariables> {
    const now = Date.now();
    const hit = this.entries.get(orgId);
    if (hit && now - hit.at < VARIABLES_TTL_MS) return hit.values;
    for (const [key, entry] of this.entries) if (now - entry.at >= VARIABLES_TTL_MS) this.entries.delete(key);
    const values = resolveVariableValues(this.services.db, this.services.sealer, orgId);
    values.catch(() => this.entries.delete(orgId));
    this.entries.set(orgId, { at: now, values });
    return values;
  }
}

/**
 * A dead node's shards are taken over after about this plus one renewal: 6 s keeps that within
 * the shortest interval (10 s); renewals every 2 s cost a few queries per node.
 */
export const DEFAULT_LEASE_TTL_MS = 6_000;

export interface EngineOptions {
  /** Lease lifetime: a node that dies loses its shards after this (and at most one interval of checks). */
  leaseTtlMs?: number;
  pollMs?: number;
  reloadMs?: number;
  /** Where the scheduler's metrics (lag, dropped and skipped ticks) are registered. */
  registry?: Registry;
}

export async function startCheckEngine(services: Services, options: EngineOptions = {}): Promise<Scheduler> {
  const probe = probeContextOf(services);
  const variables = new VariableValues(services);
  const leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const scheduler = new Scheduler({
    db: services.db, plans: services.plans, sealer: services.sealer, regions: services.regions, log: services.log,
    sink: services.results, region: LOCAL_REGION,
    execute: (_monitor, spec, signal, secretParts) => runProbe(spec, { ...probe, signal, ...(secretParts && { secretParts }) }),
    restate: async (monitor) => { await restateManualState(services.db, services.results, services.clock, monitor); },
    variables: (orgId) => variables.get(orgId),
    perHostMaxInflight: cfg.int(services.config, 'checker.per_host_max_inflight'),
    leases: { ttlMs: leaseTtlMs, renewMs: Math.floor(leaseTtlMs / 3) },
    pollMs: options.pollMs ?? 2_000,
    reloadMs: options.reloadMs ?? 60_000,
    ...(options.registry && { registry: options.registry }),
  });
  await scheduler.start();
  return scheduler;
}
