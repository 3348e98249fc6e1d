// Bulk actions (CONTRACT.md: `POST /api/v1/targets/bulk-action`): one action on many monitors of the
// org, all or nothing. Each monitor's new values go through the same rules as a PATCH of it; an
// error names the id's place (`ids[3]`) or the input at fault (`tags[1]`, `channel_ids[0]`).
import { Type, type Static } from '@sinclair/typebox';
import { existingChannelIds } from '../channels/index.js';
import { heartbeatsAfterUpdate } from '../heartbeat/index.js';
import { endIncidentsOfDeleted } from '../incidents/index.js';
import { discriminated } from '../http/schema-helpers.js';
import { isObject } from '../http/validation.js';
import { hasScope, type Scope } from '../identity/scopes.js';
import { writeAuditMany } from '../shared/audit.js';
import { AppError } from '../shared/errors.js';
import { normalizeTags, TAGS_MAX } from '../shared/tags.js';
import { GROUP_NAME_MAX_LENGTH, INTERVAL_MAX_SECS } from './constants.js';
import { BULK_CREATE_MAX } from './bulk.js';
import { Target, type PatchTarget, type TargetT } from './schema.js';
import { buildPatchValues, reconcileAfterDelete, toTarget, type TargetsCtx } from './service.js';
import { deleteTargetRows, lockAccount, lockTargetRows, updateTargetRows, type TargetRow } from './store.js';

const ids = Type.Array(Type.String(), { minItems: 1, description: `1-${BULK_CREATE_MAX} monitor ids of the org, no duplicates; more is 413 \`BULK_TOO_LARGE\`, as for a bulk create.` });
const strict = { additionalProperties: false } as const;
const simple = <A extends string>(action: A, description: string) => Type.Object({ action: Type.Literal(action), ids }, { ...strict, title: `BulkAction_${action}`, description });
const tagged = <A extends string>(action: A, description: string) => Type.Object({
  action: Type.Literal(action), ids, tags: Type.Array(Type.String({ maxLength: 1024 }), { minItems: 1, maxItems: 1000 }),
}, { ...strict, title: `BulkAction_${action}`, description });
const channels = <A extends string>(action: A, description: string) => Type.Object({
  action: Type.Literal(action), ids, channel_ids: Type.Array(Type.String(), { minItems: 1, maxItems: 1000 }),
}, { ...strict, title: `BulkAction_${action}`, description });

export const BulkActionBody = discriminated('action', [
  simple('enable', 'Resume the monitors.'),
  simple('disable', 'Pause the monitors.'),
  simple('delete', 'Delete the monitors; needs `targets:delete` (not `targets:write`). Answers `{deleted: [ids]}`.'),
  tagged('tag-add', `Add the tags (trimmed, de-duplicated); a monitor left with more than ${TAGS_MAX} is refused.`),
  tagged('tag-remove', 'Remove the tags: each trimmed and held to the tag rules (a blank one or one over 50 characters is 400 naming it), then matched as stored, case included.'),
  Type.Object({
    action: Type.Literal('set-group'), ids,
    group_name: Type.Union([Type.String({ maxLength: GROUP_NAME_MAX_LENGTH }), Type.Null()], { description: 'Stored trimmed; null, or nothing left after trimming, clears.' }),
  }, { ...strict, title: 'BulkAction_set-group' }),
  Type.Object({
    action: Type.Literal('set-interval'), ids, interval: Type.Integer({ maximum: INTERVAL_MAX_SECS }),
  }, { ...strict, title: 'BulkAction_set-interval', description: `At most ${INTERVAL_MAX_SECS}. Each monitor's floor applies (422 \`MIN_CHECK_INTERVAL\`, zero and negative values included); a manual monitor takes only 60 (400 \`INVALID_INTERVAL\`).` }),
  channels('bind-channels', 'Add alert bindings to the channels; an unknown, foreign or malformed id is 400 `INVALID_ALERT_CONFIG`.'),
  channels('unbind-channels', 'Remove alert bindings to the channels.'),
], { description: 'One action on many monitors, a tagged union on `action`. All or nothing.' });

export type BulkAction = Static<typeof BulkActionBody>;

export const BulkActionResult = Type.Object({
  targets: Type.Optional(Type.Array(Target, { description: 'The monitors after the action, in `ids` order.' })),
  deleted: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { description: 'For `delete` (instead of `targets`): the deleted ids, in `ids` order.' })),
});

/** An error about one monitor of the batch names its place in `ids`. */
function underId(err: unknown, i: number): unknown {
  if (!(err instanceof AppError)) return err;
  return new AppError(err.status, err.code, `ids[${i}]: ${err.message}`, { ...err.extra, field: `ids[${i}]` });
}

/** Distinct ids, each a monitor of the org (404 naming the first that is not), locked in `ids` order. */
async function lockedRows(tx: Parameters<typeof lockTargetRows>[0], ctx: TargetsCtx, wanted: readonly string[]): Promise<TargetRow[]> {
  const lowered = wanted.map((id) => id.toLowerCase());
  lowered.forEach((id, i) => {
    if (lowered.indexOf(id) !== i) throw new AppError(400, 'VALIDATION_FAILED', `ids[${i}]: duplicate id`, { field: `ids[${i}]` });
  });
  const byId = new Map((await lockTargetRows(tx, ctx.org.id, lowered)).map((r) => [r.id, r]));
  return lowered.map((id, i) => {
    const row = byId.get(id);
    if (!row) throw new AppError(404, 'NOT_FOUND', `ids[${i}]: no monitor of this org has this id`, { field: `ids[${i}]` });
    return row;
  });
}

/** The PATCH each action amounts to for one monitor. */
function patchFor(action: BulkAction, row: TargetRow, tags: string[], channelIds: string[]): PatchTarget {
  switch (action.action) {
    case 'enable': return { enabled: true };
    case 'disable': return { enabled: false };
    case 'tag-add': return { tags: [...row.tags, ...tags.filter((t) => !row.tags.includes(t))] };
    case 'tag-remove': return { tags: row.tags.filter((t) => !tags.includes(t)) };
    case 'set-group': return { group_name: action.group_name };
    case 'set-interval': return { interval: action.interval };
    case 'bind-channels': return { alerts: [...row.alert_channel_ids, ...channelIds.filter((c) => !row.alert_channel_ids.includes(c))].map((channel_id) => ({ channel_id })) };
    case 'unbind-channels': return { alerts: row.alert_channel_ids.filter((c) => !channelIds.includes(c)).map((channel_id) => ({ channel_id })) };
    case 'delete': return {};
  }
}

/** The action's own inputs, checked once for the batch. */
async function actionInputs(tx: Parameters<typeof lockTargetRows>[0], ctx: TargetsCtx, action: BulkAction): Promise<{ tags: string[]; channelIds: string[] }> {
  const tags = 'tags' in action ? normalizeTags(action.tags) : [];
  if (!('channel_ids' in action)) return { tags, channelIds: [] };
  const channelIds = action.channel_ids.map((id) => id.toLowerCase());
  channelIds.forEach((id, i) => {
    if (channelIds.indexOf(id) !== i) throw new AppError(400, 'INVALID_ALERT_CONFIG', `channel_ids[${i}]: duplicate channel`, { field: `channel_ids[${i}]` });
  });
  if (action.action === 'bind-channels') {
    const known = await existingChannelIds(tx, ctx.org.id, channelIds, 'share');
    channelIds.forEach((id, i) => {
      if (!known.has(id)) throw new AppError(400, 'INVALID_ALERT_CONFIG', `channel_ids[${i}]: no notification channel of this org has this id`, { field: `channel_ids[${i}]` });
    });
  }
  return { tags, channelIds };
}

/**
 * The scope a bulk action needs (service-api.md, "API token auth": `targets:delete` covers bulk
 * delete, `targets:write` bulk writes). Read from the raw body, before it is validated, so a token
 * without the scope meets 403 whatever else the body holds, as on a route with a fixed scope.
 */
export function bulkActionScope(body: unknown): Scope {
  return isObject(body) && body.action === 'delete' ? 'targets:delete' : 'targets:write';
}

/** 403 `INSUFFICIENT_SCOPE` naming the scope the body's action needs. */
export function checkBulkActionScope(scopes: ReadonlySet<string>, body: unknown): void {
  const needed = bulkActionScope(body);
  if (!hasScope(scopes, needed)) throw new AppError(403, 'INSUFFICIENT_SCOPE', `this token lacks the scope ${needed}`);
}

export async function runBulkAction(ctx: TargetsCtx, action: BulkAction): Promise<{ targets: TargetT[] } | { deleted: string[] }> {
  if (action.ids.length > BULK_CREATE_MAX) {
    throw new AppError(413, 'BULK_TOO_LARGE', `ids: at most ${BULK_CREATE_MAX} per request (got ${action.ids.length})`, { field: 'ids' });
  }
  const catalog = await ctx.regions.enabled();
  return ctx.db.transaction(async (tx) => {
    const { tags, channelIds } = await actionInputs(tx, ctx, action);
    // A delete releases holds after it, which takes the pool's lock and then the rows: same order here.
    if (action.action === 'delete') await lockAccount(tx, ctx.org.accountId);
    const rows = await lockedRows(tx, ctx, action.ids);
    const audit = (name: string, details: (row: TargetRow) => Record<string, unknown>) => writeAuditMany(tx, ctx.actor, rows.map((row) => ({
      action: name, orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: row.id,
      details: { ...details(row), bulk_action: action.action, write_source: ctx.writeSource },
    })));
    if (action.action === 'delete') {
      await endIncidentsOfDeleted(tx, rows.map((r) => r.id), ctx.clock.now(), ctx.actor);
      await deleteTargetRows(tx, ctx.org.id, rows.map((r) => r.id));
      await audit('target.deleted', (row) => ({ name: row.name, kind: row.kind }));
      await reconcileAfterDelete(tx, ctx);
      return { deleted: rows.map((r) => r.id) };
    }
    const values = rows.map((row, i) => {
      try {
        const patch = patchFor(action, row, tags, channelIds);
        if (patch.tags && patch.tags.length > TAGS_MAX) throw new AppError(400, 'VALIDATION_FAILED', `tags: a monitor carries at most ${TAGS_MAX} distinct tags`, { field: 'tags' });
        return { id: row.id, ...buildPatchValues(ctx, row, patch, null, catalog) };
      } catch (err) {
        throw underId(err, i);
      }
    });
    const order = new Map(rows.map((r, i) => [r.id, i]));
    const updated = (await updateTargetRows(tx, ctx.org.id, values)).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    await heartbeatsAfterUpdate(tx, rows, updated, ctx.clock.now(), ctx.results);
    await audit('target.updated', () => ({ fields: Object.keys(patchFor(action, rows[0]!, tags, channelIds)) }));
    return { targets: updated.map(toTarget) };
  });
}
