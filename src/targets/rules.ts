// Target field rules beyond the schema (monitoring-api.md, "Target (monitor)", "Alert config",
// "Manual monitor rules"): the name, alert bindings and counts, region policy.
import { existingChannelIds } from '../channels/index.js';
import type { Executor } from '../db/db.js';
import { AppError } from '../shared/errors.js';
import { requiredText } from '../shared/text.js';
import {
  ALERT_CONFIRMATIONS_MAX, DEFAULT_ALERT_CONFIRMATIONS, DEFAULT_REGION_POLICY, DEFAULT_RENOTIFY_INTERVAL_SECS, RECOVERY_PERIOD_MAX_SECS,
  RENOTIFY_MAX_SECS, RENOTIFY_MIN_SECS, defaultRecoveryPeriodSecs, type CheckKind,
} from './constants.js';
import type { RegionPolicyT } from './schema.js';


export interface AlertConfig {
  alert_channel_ids: string[];
  alert_confirmations: number;
  notify_recovery: boolean;
  renotify_interval_secs: number;
  recovery_period_secs: number;
  region_policy: RegionPolicyT;
}

export interface AlertInput {
  alerts?: Array<{ channel_id: string }>;
  alert_confirmations?: number;
  notify_recovery?: boolean;
  renotify_interval_secs?: number;
  recovery_period_secs?: number;
  region_policy?: RegionPolicyT;
}

export function defaultAlertConfig(kind: CheckKind): AlertConfig {
  return {
    alert_channel_ids: [], alert_confirmations: kind === 'manual' ? 1 : DEFAULT_ALERT_CONFIRMATIONS, notify_recovery: true,
    renotify_interval_secs: DEFAULT_RENOTIFY_INTERVAL_SECS, recovery_period_secs: defaultRecoveryPeriodSecs(kind),
    region_policy: DEFAULT_REGION_POLICY,
  };
}

/**
 * A target's name as stored: trimmed, and 400 when nothing is left. One rule for create, PATCH,
 * bulk and duplicate (a copy's error then reads `copies[i].name`).
 */
export const targetName = (name: string): string => requiredText(name, 'name');

/**
 * A group name as stored: trimmed, and no group (null) when nothing is left, so that no monitor sits
 * in a group whose name cannot be seen.
 */
export const groupName = (value: string | null): string | null => value?.trim() || null;

const alertError = (field: string, message: string): AppError => new AppError(400, 'INVALID_ALERT_CONFIG', `${field}: ${message}`, { field });

/** Distinct channel ids, lower-cased; whether each is a channel of the org is checked in the write's transaction (`checkChannelsExist`). */
function checkBindings(alerts: Array<{ channel_id: string }>): string[] {
  const ids: string[] = [];
  alerts.forEach(({ channel_id: id }, i) => {
    if (ids.includes(id.toLowerCase())) throw alertError(`alerts[${i}].channel_id`, 'duplicate channel');
    ids.push(id.toLowerCase());
  });
  return ids;
}

/**
 * Every bound id must be a channel of the org. Share-locks the channels, so a delete running
 * beside this write waits for it and then unbinds what it wrote. `field` names the id's place.
 */
export async function checkChannelsExist(tx: Executor, orgId: string, ids: readonly string[], field: (i: number) => string): Promise<void> {
  checkChannelsKnown(await existingChannelIds(tx, orgId, ids, 'share'), ids, field);
}

/** The same rule against channels already looked up (a batch looks them up once). */
export function checkChannelsKnown(known: ReadonlySet<string>, ids: readonly string[], field: (i: number) => string): void {
  ids.forEach((id, i) => { if (!known.has(id)) throw alertError(field(i), 'no notification channel of this org has this id'); });
}

function checkRegionPolicy(policy: RegionPolicyT, catalogSize: number): void {
  if (typeof policy === 'object' && (policy.count < 1 || policy.count > catalogSize)) {
    throw new AppError(422, 'INVALID_REGION_POLICY', `region_policy.count: must be 1..${catalogSize} (the enabled regions)`, { field: 'region_policy.count' });
  }
}

/**
 * The alert config to store: the body's fields over `base` (defaults on create, the row on PATCH).
 * A manual monitor is created with one confirmation whatever the body says; a PATCH to another is refused.
 */
export function resolveAlertConfig(kind: CheckKind, input: AlertInput, base: AlertConfig, opts: { creating: boolean; catalogSize: number }): AlertConfig {
  const config: AlertConfig = {
    alert_channel_ids: input.alerts ? checkBindings(input.alerts) : base.alert_channel_ids,
    alert_confirmations: input.alert_confirmations ?? base.alert_confirmations,
    notify_recovery: input.notify_recovery ?? base.notify_recovery,
    renotify_interval_secs: input.renotify_interval_secs ?? base.renotify_interval_secs,
    recovery_period_secs: input.recovery_period_secs ?? base.recovery_period_secs,
    region_policy: input.region_policy ?? base.region_policy,
  };
  if (kind === 'manual' && opts.creating) config.alert_confirmations = 1;
  checkAlertBounds(kind, config);
  if (input.region_policy !== undefined) checkRegionPolicy(config.region_policy, opts.catalogSize);
  return config;
}

/**
 * The alert bounds (spec "Alert config"), every one answered 400 `INVALID_ALERT_CONFIG`: the
 * schema states none of them, so an out-of-range value never meets a generic VALIDATION_FAILED.
 */
function checkAlertBounds(kind: CheckKind, config: AlertConfig): void {
  const { alert_confirmations: confirmations, renotify_interval_secs: renotify, recovery_period_secs: recovery } = config;
  if (confirmations < 1 || confirmations > ALERT_CONFIRMATIONS_MAX) throw alertError('alert_confirmations', `must be 1..${ALERT_CONFIRMATIONS_MAX}`);
  if (kind === 'manual' && confirmations !== 1) throw alertError('alert_confirmations', 'a manual monitor uses exactly 1');
  if (renotify !== 0 && (renotify < RENOTIFY_MIN_SECS || renotify > RENOTIFY_MAX_SECS)) {
    throw alertError('renotify_interval_secs', `must be 0 (off) or ${RENOTIFY_MIN_SECS}..${RENOTIFY_MAX_SECS}`);
  }
  if (recovery < 0 || recovery > RECOVERY_PERIOD_MAX_SECS) throw alertError('recovery_period_secs', `must be 0..${RECOVERY_PERIOD_MAX_SECS}`);
  if (kind === 'manual' && recovery !== 0) throw alertError('recovery_period_secs', 'a manual monitor accepts only 0');
}
