// The rules of targets (monitoring-api.md, "Target (monitor)", "PATCH rules", "Region rules";
// service-api.md, Limits 2): create, read, list, update and delete inside one org, with the
// account's `max_targets` and `max_flow_checks` enforced at the insert under a per-account lock.
import type { Db, Executor } from '../db/db.js';
import { reconcileHolds } from '../plans/holds.js';
import type { PlanService, EffectivePlan } from '../plans/service.js';
import type { RegionCatalog } from '../regions/catalog.js';
import type { OperatorRegionT } from '../regions/schema.js';
import { heartbeatsAfterUpdate, mintPingTokens } from '../heartbeat/index.js';
import { endIncidentsOfDeleted, rescheduleReminders } from '../incidents/index.js';
import { writeAudit } from '../shared/audit.js';
import type { Actor, Clock, OrgRef } from '../shared/context.js';
import type { ResultWriter } from '../results/index.js';
import { AppError, notFound, quotaExceeded } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';
import { checkReferences, listVariableKinds, type ReferencedText } from '../variables/index.js';
import { checkFlowEnabled, prepareCheck, type PreparedCheck } from './checks.js';
import { refuseManualInterval, resolveInterval } from './intervals.js';
import type { NetworkCtx } from './network.js';
import { redactCredentials } from './redaction.js';
import { checkRegions, defaultRegions } from './regions.js';
import { normalizeTags } from '../shared/tags.js';
import { checkChannelsExist, defaultAlertConfig, groupName, resolveAlertConfig, targetName, type AlertConfig } from './rules.js';
import type { WriteSource } from '../http/write-source.js';
import type { CreateTarget, PatchTarget, RegionPolicyT, TargetT } from './schema.js';
import {
  countAccountTargets, deleteTargetRow, getTargetRow, insertTarget, isOrgMember, listTargetRows, lockAccount, updateTargetRow,
  type TargetFilter, type TargetRow, type TargetValues,
} from './store.js';

export interface TargetsCtx {
  db: Db;
  actor: Actor;
  org: OrgRef;
  /** The caller: default owner of what it creates. */
  userId: string;
  plan: EffectivePlan;
  plans: PlanService;
  writeSource: WriteSource;
  sealer: Sealer;
  regions: RegionCatalog;
  network: NetworkCtx;
  clock: Clock;
  /** Results a monitor change writes at once (a heartbeat resumed after being down). */
  results: ResultWriter;
}

/** The one mapping from a row to the API object; credentials read back as `***`. */
export function toTarget(row: TargetRow): TargetT {
  return {
    id: row.id, name: row.name, check: redactCredentials(row.check_spec), interval: row.interval_secs, enabled: row.enabled,
    tags: row.tags, regions: row.regions, group_name: row.group_name, owner_user_id: row.owner_user_id,
    alerts: row.alert_channel_ids.map((channel_id) => ({ channel_id })), alert_confirmations: row.alert_confirmations,
    notify_recovery: row.notify_recovery, renotify_interval_secs: row.renotify_interval_secs,
    recovery_period_secs: row.recovery_period_secs, region_policy: row.region_policy as RegionPolicyT,
    write_source: row.write_source as WriteSource, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export async function getTargetRowInOrg(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<TargetRow> {
  const row = await getTargetRow(db, orgId, id, lock);
  if (!row) throw notFound('target');
  return row;
}

export async function getTargetInOrg(ctx: TargetsCtx, id: string): Promise<TargetT> {
  return toTarget(await getTargetRowInOrg(ctx.db, ctx.org.id, id));
}

export async function listTargets(ctx: TargetsCtx, filter: TargetFilter, page: { limit: number; offset: number }) {
  const { rows, total } = await listTargetRows(ctx.db, ctx.org.id, filter, page);
  return { targets: rows.map(toTarget), total, limit: page.limit, offset: page.offset };
}

/** What building a new target's values reads besides the body (a bulk create loads it once). */
export interface CreateDeps {
  catalog: readonly OperatorRegionT[];
  isMember: (userId: string) => Promise<boolean>;
}

export async function createDeps(ctx: TargetsCtx): Promise<CreateDeps> {
  return { catalog: await ctx.regions.enabled(), isMember: (userId) => isOrgMember(ctx.db, ctx.org.id, userId) };
}

async function checkOwner(isMember: CreateDeps['isMember'], owner: string | null): Promise<void> {
  if (owner !== null && !(await isMember(owner))) {
    throw new AppError(400, 'VALIDATION_FAILED', 'owner_user_id: not a member of this org', { field: 'owner_user_id' });
  }
}

export const bindingField = (i: number): string => `alerts[${i}].channel_id`;

/** Under the variables' share locks: a referenced variable cannot be deleted before this commits. */
export async function checkVariables(tx: Executor, orgId: string, texts: readonly ReferencedText[]): Promise<void> {
  if (texts.every((t) => !t.text?.includes('{{'))) return;
  checkReferences({ texts, variables: await listVariableKinds(tx, orgId, 'share') });
}

export async function buildCreateValues(ctx: TargetsCtx, input: CreateTarget, prepared: PreparedCheck, deps: CreateDeps): Promise<TargetValues> {
  const { check } = prepared;
  const { catalog } = deps;
  const floor = ctx.plan.caps.min_check_interval_secs;
  const maxRegions = ctx.plan.caps.max_regions;
  const owner = input.owner_user_id === undefined ? ctx.userId : input.owner_user_id;
  await checkOwner(deps.isMember, owner);
  const alertOpts = { creating: true, catalogSize: catalog.length };
  return {
    name: targetName(input.name), kind: check.type, check_spec: prepared.stored,
    interval_secs: resolveInterval(check, floor, input.interval),
    enabled: input.enabled ?? true,
    tags: normalizeTags(input.tags ?? []),
    regions: input.regions === undefined ? defaultRegions(check.type, catalog, maxRegions) : checkRegions(check.type, input.regions, catalog, maxRegions),
    group_name: groupName(input.group_name ?? null), owner_user_id: owner,
    ...resolveAlertConfig(check.type, input, defaultAlertConfig(check.type), alertOpts),
    variable_refs: prepared.variableRefs, write_source: ctx.writeSource,
  };
}

/** Counts the account's flows and targets under the account lock, then inserts. */
async function insertWithinQuota(ctx: TargetsCtx, tx: Executor, values: TargetValues): Promise<TargetRow> {
  await lockAccount(tx, ctx.org.accountId);
  const plan = await ctx.plans.load(tx, ctx.org.accountId);
  const flowCap = plan.caps.max_flow_checks;
  if (values.kind === 'flow' && flowCap !== null && (await countAccountTargets(tx, ctx.org.accountId, 'flow')) >= flowCap) {
    throw quotaExceeded('max_flow_checks', flowCap);
  }
  const row = await insertTarget(tx, { id: newId(), orgId: ctx.org.id, accountId: ctx.org.accountId, limit: plan.caps.max_targets, ...values });
  if (!row) throw quotaExceeded('max_targets', plan.caps.max_targets);
  return row;
}

export async function createTarget(ctx: TargetsCtx, input: CreateTarget): Promise<TargetT> {
  checkFlowEnabled(input.check.type, ctx.plan);
  const prepared = await prepareCheck(input.check, ctx);
  const values = await buildCreateValues(ctx, input, prepared, await createDeps(ctx));
  return ctx.db.transaction(async (tx) => {
    await checkVariables(tx, ctx.org.id, prepared.texts);
    await checkChannelsExist(tx, ctx.org.id, values.alert_channel_ids, bindingField);
    const row = await insertWithinQuota(ctx, tx, values);
    if (row.kind === 'heartbeat') await mintPingTokens(tx, ctx.sealer, ctx.org.id, [row.id]);
    await writeAudit(tx, ctx.actor, {
      action: 'target.created', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: row.id,
      details: { name: row.name, kind: row.kind, write_source: row.write_source },
    });
    return toTarget(row);
  });
}

const alertConfigOf = (row: TargetRow): AlertConfig => ({
  alert_channel_ids: row.alert_channel_ids, alert_confirmations: row.alert_confirmations, notify_recovery: row.notify_recovery,
  renotify_interval_secs: row.renotify_interval_secs, recovery_period_secs: row.recovery_period_secs,
  region_policy: row.region_policy as RegionPolicyT,
});

/** Runs inside the PATCH transaction on the locked row: no query here (PGlite has one connection). */
export function buildPatchValues(ctx: TargetsCtx, row: TargetRow, input: PatchTarget, prepared: PreparedCheck | null, catalog: readonly OperatorRegionT[]): TargetValues {
  const check = prepared?.check ?? (row.check_spec as unknown as PreparedCheck['check']);
  const alertOpts = { creating: false, catalogSize: catalog.length };
  return {
    name: input.name === undefined ? row.name : targetName(input.name), kind: row.kind, check_spec: prepared?.stored ?? row.check_spec,
    interval_secs: resolveInterval(check, ctx.plan.caps.min_check_interval_secs, input.interval, row.interval_secs),
    enabled: input.enabled ?? row.enabled,
    tags: input.tags === undefined ? row.tags : normalizeTags(input.tags),
    regions: input.regions === undefined ? row.regions : checkRegions(row.kind, input.regions, catalog, ctx.plan.caps.max_regions),
    group_name: input.group_name === undefined ? row.group_name : groupName(input.group_name),
    owner_user_id: input.owner_user_id === undefined ? row.owner_user_id : input.owner_user_id,
    ...resolveAlertConfig(row.kind, input, alertConfigOf(row), alertOpts),
    variable_refs: prepared?.variableRefs ?? row.variable_refs, write_source: ctx.writeSource,
  };
}

/** PATCH rule 1: a `check` sent keeps the stored kind. */
function checkKindKept(kind: string, type: string): void {
  if (type !== kind) {
    throw new AppError(400, 'CHECK_KIND_IMMUTABLE', `check.type: this monitor is ${kind}; its kind is fixed after creation`, { field: 'check.type' });
  }
}

/**
 * The kind's rules asked of a PATCH body not validated yet: rule 1 (a `check` of another kind would
 * otherwise be judged by that kind's shape first, an incomplete one answering its missing fields),
 * and a manual monitor's fixed interval. A foreign or unknown id is 404, as the PATCH would answer.
 */
export async function checkPatchKind(ctx: TargetsCtx, id: string, sent: { type?: string; interval?: unknown }): Promise<void> {
  const { kind } = await getTargetRowInOrg(ctx.db, ctx.org.id, id);
  if (sent.type !== undefined) checkKindKept(kind, sent.type);
  if (kind === 'manual') refuseManualInterval(sent.interval);
}

/** Only the fields sent change; a `check` must keep the stored type and replaces the stored check whole. */
export async function patchTarget(ctx: TargetsCtx, id: string, input: PatchTarget): Promise<TargetT> {
  const current = await getTargetRowInOrg(ctx.db, ctx.org.id, id);
  if (input.check) checkKindKept(current.kind, input.check.type);
  const prepared = input.check ? await prepareCheck(input.check, ctx) : null;
  if (input.owner_user_id !== undefined) await checkOwner((userId) => isOrgMember(ctx.db, ctx.org.id, userId), input.owner_user_id);
  const catalog = await ctx.regions.enabled();
  return ctx.db.transaction(async (tx) => {
    const row = await getTargetRowInOrg(tx, ctx.org.id, id, 'update');
    const values = buildPatchValues(ctx, row, input, prepared, catalog);
    if (prepared) await checkVariables(tx, ctx.org.id, prepared.texts);
    if (input.alerts) await checkChannelsExist(tx, ctx.org.id, values.alert_channel_ids, bindingField);
    const updated = (await updateTargetRow(tx, ctx.org.id, id, values))!;
    await heartbeatsAfterUpdate(tx, [row], [updated], ctx.clock.now(), ctx.results);
    if (updated.renotify_interval_secs !== row.renotify_interval_secs) await rescheduleReminders(tx, id, updated.renotify_interval_secs, ctx.clock.now());
    await writeAudit(tx, ctx.actor, {
      action: 'target.updated', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
      details: { fields: Object.keys(input), write_source: values.write_source },
    });
    return toTarget(updated);
  });
}

export async function deleteTarget(ctx: TargetsCtx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    // The pool's lock before the row's, as the holds reconcile that follows takes them.
    await lockAccount(tx, ctx.org.accountId);
    const row = await getTargetRowInOrg(tx, ctx.org.id, id, 'update');
    await endIncidentsOfDeleted(tx, [id], ctx.clock.now(), ctx.actor);
    await deleteTargetRow(tx, ctx.org.id, id);
    await writeAudit(tx, ctx.actor, {
      action: 'target.deleted', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
      details: { name: row.name, kind: row.kind, write_source: ctx.writeSource },
    });
    await reconcileAfterDelete(tx, ctx);
  });
}

/** A deletion frees a slot: a monitor held for it is released in the same transaction. */
export async function reconcileAfterDelete(tx: Executor, ctx: TargetsCtx): Promise<void> {
  await reconcileHolds(tx, ctx.org.accountId, ctx.plan, { results: ctx.results, clock: ctx.clock });
}
