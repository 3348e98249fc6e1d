// A variable's new value fills the URL of every http monitor that references it, so a rotation is
// judged as each of those monitors' own update would be (monitoring-api.md, Errors: the deny-lists
// and the blocked ranges apply on update): otherwise `{{host}}` rotated to a deny-listed domain
// would send checks there that no write could have set up.
import type { FastifyRequest } from 'fastify';
import type { Executor } from '../db/db.js';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { snapshotVariables, substituteReferences } from '../variables/index.js';
import type { CheckSpecT } from './check-specs.js';
import { checkKindRules } from './kinds.js';
import { checkNetworkRules, memoizedGuard, type NetworkCtx } from './network.js';
import { targetsCtx } from './routes.js';

/** The check a variable rotation by `request` runs (`registerVariableRoutes`). */
export const rotationCheckFor = (services: Services) => (request: FastifyRequest) =>
  (tx: Executor, key: string): Promise<void> => checkUrlsFilledBy(tx, targetsCtx(services, request).network, request.auth!.org!.id, key);

/**
 * Throws the error the first monitor's update would get, with `field` `value` and the monitor named.
 * Runs in the rotation's transaction, after its update: the URLs are filled with the new value.
 */
export async function checkUrlsFilledBy(tx: Executor, network: Omit<NetworkCtx, 'variables'>, orgId: string, key: string): Promise<void> {
  const monitors = await tx.query<{ id: string; name: string; check_spec: CheckSpecT }>(
    `SELECT id, name, check_spec FROM targets
      WHERE org_id = $1 AND kind = 'http' AND variable_refs @> ARRAY[$2::text] ORDER BY id`, [orgId, key]);
  if (monitors.length === 0) return;
  const snapshot = await snapshotVariables(tx, orgId);
  // Each host resolved once: the monitors a variable fills mostly share the host it names.
  const judged: NetworkCtx = { ...network, guard: memoizedGuard(network.guard), variables: async () => snapshot };
  for (const { id, name, check_spec: check } of monitors) {
    if (check.type !== 'http' || !check.url.includes('{{')) continue;
    const filled = { ...check, url: substituteReferences(check.url, snapshot.plain) };
    try {
      checkKindRules(filled, { maxFlowSteps: 0 });
      await checkNetworkRules(judged, filled);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw new AppError(err.status, err.code, `this value would make the URL of monitor "${name}" (${id}) fail its rules: ${err.message}`, { field: 'value' });
    }
  }
}
