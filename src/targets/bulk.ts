// Bulk create (monitoring-api.md, "Endpoints": up to 10,000 targets, each item with the same
// fields and rules as a single create): all-or-nothing, errors name `targets[i].field`. Every
// item is checked before the transaction; inside it the org's variables and channels are read
// once, the account is counted once under its lock, and the rows go in a few statements.
import type { Executor } from '../db/db.js';
import { existingChannelIds } from '../channels/index.js';
import { mintPingTokens } from '../heartbeat/index.js';
import { auditActor } from '../shared/audit.js';
import { AppError, quotaExceeded, underField } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { checkReferences, listVariableKinds, type ReferencedText } from '../variables/index.js';
import { checkFlowEnabled, prepareCheck } from './checks.js';
import { memoizedGuard } from './network.js';
import { checkChannelsKnown } from './rules.js';
import type { CreateTarget, TargetT } from './schema.js';
import { bindingField, buildCreateValues, createDeps, toTarget, type TargetsCtx } from './service.js';
import { countAccountTargets, insertTargets, lockAccount, type TargetRow, type TargetValues } from './store.js';

export const BULK_CREATE_MAX = 10_000;

/**
 * One audit row per new monitor, its details built by the store from the rows just written: the
 * statement carries two id arrays, not 10,000 JSON documents.
 */
async function auditCreated(tx: Executor, ctx: TargetsCtx, ids: readonly string[], action: string, sourceId?: string): Promise<void> {
  const who = auditActor(ctx.actor);
  await tx.query(
    `INSERT INTO audit_log (id, org_id, account_id, actor_type, actor_id, action, entity_type, entity_id, details)
     SELECT a.audit_id, t.org_id, t.account_id, $1, $2, $3, 'target', t.id::text,
            jsonb_strip_nulls(jsonb_build_object('name', t.name, 'kind', t.kind, 'write_source', t.write_source, 'source_id', $4::text)) || $7::jsonb
       FROM unnest($5::uuid[], $6::uuid[]) AS a(audit_id, target_id) JOIN targets t ON t.id = a.target_id`,
    [who.type, who.id, action, sourceId ?? null, ids.map(() => newId()), ids, who.details]);
}

/** Runs `fn` for item `i` of a batch; its error names the item (`targets[i].check.url`). */
export async function atItem<T>(prefix: string, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw underField(err, prefix);
  }
}

export interface PreparedItem { values: TargetValues; texts: ReferencedText[] }

/** Checks one batch's bodies as single creates would, with host lookups and membership read once each. */
async function prepareItems(ctx: TargetsCtx, inputs: readonly CreateTarget[]): Promise<PreparedItem[]> {
  const itemCtx: TargetsCtx = { ...ctx, network: { ...ctx.network, guard: memoizedGuard(ctx.network.guard) } };
  const deps = await createDeps(ctx);
  const members = new Map<string, Promise<boolean>>();
  const isMember = (userId: string) => members.get(userId) ?? members.set(userId, deps.isMember(userId)).get(userId)!;
  const items: PreparedItem[] = [];
  for (const [i, input] of inputs.entries()) {
    items.push(await atItem(`targets[${i}]`, async () => {
      checkFlowEnabled(input.check.type, ctx.plan);
      const prepared = await prepareCheck(input.check, itemCtx);
      return { values: await buildCreateValues(itemCtx, input, prepared, { ...deps, isMember }), texts: prepared.texts };
    }));
  }
  return items;
}

/**
 * Inside the write's transaction: every reference and binding of every item, against the org's
 * variables and channels read once (share-locked, so none is deleted before this commits).
 */
export async function checkItemsInStore(tx: Executor, ctx: TargetsCtx, items: readonly PreparedItem[], prefix: (i: number) => string): Promise<void> {
  if (items.some((item) => item.texts.some((t) => t.text?.includes('{{')))) {
    const variables = await listVariableKinds(tx, ctx.org.id, 'share');
    for (const [i, item] of items.entries()) await atItem(prefix(i), () => checkReferences({ texts: item.texts, variables }));
  }
  const channelIds = [...new Set(items.flatMap((item) => item.values.alert_channel_ids))];
  if (channelIds.length) {
    const known = await existingChannelIds(tx, ctx.org.id, channelIds, 'share');
    for (const [i, item] of items.entries()) await atItem(prefix(i), () => checkChannelsKnown(known, item.values.alert_channel_ids, bindingField));
  }
}

/**
 * Inserts all or none, answering the rows in the items' order: the account's `max_targets` and `max_flow_checks` counted once under the
 * account lock. Heartbeat monitors get their ping URLs in the same transaction.
 */
export async function insertItemsWithinQuota(
  tx: Executor, ctx: TargetsCtx, items: readonly PreparedItem[], action: string,
  options: { flowOverflow?: 'quota' | 'invalid_flow_params'; sourceId?: string } = {},
): Promise<TargetRow[]> {
  await lockAccount(tx, ctx.org.accountId);
  const plan = await ctx.plans.load(tx, ctx.org.accountId);
  const flows = items.filter((item) => item.values.kind === 'flow').length;
  const flowCap = plan.caps.max_flow_checks;
  if (flows && flowCap !== null && (await countAccountTargets(tx, ctx.org.accountId, 'flow')) + flows > flowCap) {
    const refused = quotaExceeded('max_flow_checks', flowCap, { requested: flows });
    if (options.flowOverflow === 'invalid_flow_params') {
      throw new AppError(400, 'INVALID_FLOW_PARAMS', `copies: the plan allows ${flowCap} flow checks (max_flow_checks)`, { field: 'copies', rejection: refused.extra.rejection! });
    }
    throw refused;
  }
  const cap = plan.caps.max_targets;
  if (cap !== null && (await countAccountTargets(tx, ctx.org.accountId)) + items.length > cap) {
    throw quotaExceeded('max_targets', cap, { requested: items.length });
  }
  const ids = items.map(() => newId());
  const order = new Map(ids.map((id, i) => [id, i]));
  const rows = (await insertTargets(tx, ctx.org.id, ctx.org.accountId, items.map((item, i) => ({ id: ids[i]!, ...item.values }))))
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  await mintPingTokens(tx, ctx.sealer, ctx.org.id, rows.filter((r) => r.kind === 'heartbeat').map((r) => r.id));
  await auditCreated(tx, ctx, rows.map((r) => r.id), action, options.sourceId);
  return rows;
}

export async function bulkCreateTargets(ctx: TargetsCtx, inputs: readonly CreateTarget[]): Promise<{ targets: TargetT[] }> {
  if (inputs.length > BULK_CREATE_MAX) {
    throw new AppError(413, 'BULK_TOO_LARGE', `targets: at most ${BULK_CREATE_MAX} per request (got ${inputs.length})`, { field: 'targets' });
  }
  const items = await prepareItems(ctx, inputs);
  const rows = await ctx.db.transaction(async (tx) => {
    await checkItemsInStore(tx, ctx, items, (i) => `targets[${i}]`);
    return insertItemsWithinQuota(tx, ctx, items, 'target.created');
  });
  return { targets: rows.map(toTarget) };
}
