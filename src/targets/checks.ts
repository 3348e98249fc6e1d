// A check as a write receives it: every rule of its kind, the plan's flow switch, the network
// rules, then sealed for storage with the variable references it makes.
import type { EffectivePlan } from '../plans/service.js';
import { AppError } from '../shared/errors.js';
import type { Sealer } from '../shared/seal.js';
import type { ReferencedText } from '../variables/index.js';
import type { CheckSpecT } from './check-specs.js';
import { checkKindRules } from './kinds.js';
import { checkNetworkRules, type NetworkCtx } from './network.js';
import { referencedKeys, referencedTexts, refuseSentinel, sealCredentials } from './redaction.js';
import type { TargetRow } from './store.js';

export interface PreparedCheck {
  check: CheckSpecT;
  stored: TargetRow['check_spec'];
  texts: ReferencedText[];
  variableRefs: string[];
}

/** 403 `FLOW_CHECKS_DISABLED` when the plan's flow cap is 0 (on create: an existing flow stays editable after a downgrade). */
export function checkFlowEnabled(kind: string, plan: EffectivePlan): void {
  if (kind === 'flow' && plan.caps.max_flow_checks === 0) {
    throw new AppError(403, 'FLOW_CHECKS_DISABLED', 'this plan includes no flow checks (max_flow_checks is 0)');
  }
}

export async function prepareCheck(check: CheckSpecT, deps: { plan: EffectivePlan; network: NetworkCtx; sealer: Sealer }): Promise<PreparedCheck> {
  refuseSentinel(check);
  checkKindRules(check, { maxFlowSteps: deps.plan.caps.max_flow_steps });
  await checkNetworkRules(deps.network, check);
  const texts = referencedTexts(check);
  return { check, stored: sealCredentials(check, deps.sealer), texts, variableRefs: referencedKeys(texts) };
}
