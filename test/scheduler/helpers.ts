// What the scheduler's tests share: a Scheduler wired to a test app's services, each test giving
// only what it observes or varies, and a tenant whose monitors may run at the kinds' 10 s floor.
import pino from 'pino';
import { Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { createTenantWithToken, type TestApp } from '../helpers/app.js';
import { client, overrideCaps, type Api } from '../targets/helpers.js';
import { NO_VARIABLES } from '../../src/variables/index.js';

/** A scheduler on the app's store for region `local`; every check is up, nothing is recorded. */
export function testScheduler(t: TestApp, options: Partial<SchedulerOptions>): Scheduler {
  const s = t.services;
  return new Scheduler({
    db: s.db, plans: s.plans, sealer: s.sealer, regions: s.regions, log: pino({ level: 'silent' }),
    sink: { push: () => {} }, region: 'local',
    execute: async () => ({ status: 'up', duration_ms: 1, error: null }),
    restate: async () => {}, variables: async () => NO_VARIABLES, perHostMaxInflight: 2,
    leases: { ttlMs: 6000, renewMs: 2000 }, pollMs: 1000, reloadMs: 60_000,
    ...options,
  });
}

/** A team tenant whose plan floor is lifted to 1 s, so its monitors run at their kind's floor. */
export async function tenantAtKindFloor(t: TestApp): Promise<{ api: Api; accountId: string }> {
  const tenant = await createTenantWithToken(t, { plan: 'team' });
  await overrideCaps(t, tenant.accountId, { min_check_interval_secs: 1 });
  return { api: client(t, tenant.token), accountId: tenant.accountId };
}
