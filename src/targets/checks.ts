// A check as a write receives it: every rule of its kind, the plan's flow switch, the network
// rules, then sealed for storage with the variable references it makes.
import type { EffectivePlan } from '../plans/service.js';
import { AppError } from '../shared/errors.js';
import type { Sealer } from '../shared/seal.js';
import { checkReferences, findReferences, substituteReferences, type ReferencedText } from '../variables/index.js';
import type { CheckSpecT } from './check-specs.js';
import { checkKindRules, trimAddresses } from './kinds.js';
import { checkNetworkRules, type NetworkCtx } from './network.js';
import { referencedKeys, referencedTexts, refuseSentinel, sealCredentials } from './redaction.js';
import type { TargetRow } from './store.js';

export interface PreparedCheck {
  check: CheckSpecT;
  stored: TargetRow['check_spec'];
  texts: ReferencedText[];
  variableRefs: string[];
}

/**
 * 403 `FLOW_CHECKS_DISABLED` when the plan's flow cap is 0 (on create: an existing flow stays editable
 * after a downgrade), recorded in `quota_events` as a refusal by that quota.
 */
export function checkFlowEnabled(kind: string, plan: EffectivePlan): void {
  if (kind === 'flow' && plan.caps.max_flow_checks === 0) {
    throw new AppError(403, 'FLOW_CHECKS_DISABLED', 'this plan includes no flow checks (max_flow_checks is 0)',
      { rejection: { event: 'quota_exceeded', quota: 'max_flow_checks', details: { limit: 0 } } });
  }
}

/**
 * The check as the write-time rules judge it: the references in an http `url` filled in with the
 * variables' current values, so a scheme or host taken from a variable is checked (and refused in a
 * blocked range) like a literal one. An unknown key or a secret there is 422 `UNRESOLVED_VARIABLE`
 * first: a secret's value is never read for this. The check stored keeps its references.
 */
async function judgedCheck(check: CheckSpecT, variables: NetworkCtx['variables']): Promise<CheckSpecT> {
  if (check.type !== 'http' || findReferences(check.url).length === 0) return check;
  const snapshot = await variables();
  checkReferences({ texts: [{ field: 'check.url', text: check.url, secretAllowed: false }], variables: snapshot.kinds });
  return { ...check, url: substituteReferences(check.url, snapshot.plain) };
}

export async function prepareCheck(check: CheckSpecT, deps: { plan: EffectivePlan; network: NetworkCtx; sealer: Sealer }): Promise<PreparedCheck> {
  refuseSentinel(check);
  trimAddresses(check);
  // `judged` is `check` itself for every kind but http: a dns check is normalised in place by its rules.
  const judged = await judgedCheck(check, deps.network.variables);
  checkKindRules(judged, { maxFlowSteps: deps.plan.caps.max_flow_steps });
  await checkNetworkRules(deps.network, judged);
  const texts = referencedTexts(check);
  return { check, stored: sealCredentials(check, deps.sealer), texts, variableRefs: referencedKeys(texts) };
}
