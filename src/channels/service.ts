// The rules of notification channels (monitoring-api.md, "Notification channel", "Notification
// channels"): config per kind with secrets sealed, the account's `max_notification_channels`
// enforced at the insert, SMS only on plans with SMS alerts, and a delete that unbinds the channel
// from every monitor in the same transaction.
import type { Db, Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import type { NetworkGuard } from '../net/guard.js';
import { lockQuotaPool } from '../plans/quota-lock.js';
import type { EffectivePlan, PlanService } from '../plans/service.js';
import { writeAudit } from '../shared/audit.js';
import type { Actor, OrgRef } from '../shared/context.js';
import { AppError, notFound, quotaExceeded } from '../shared/errors.js';
import { requiredText } from '../shared/text.js';
import { newId } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';
import { normalizeTags } from '../shared/tags.js';
import { checkConfigUrls, redactConfig, refuseSentinel, sealConfig } from './configs.js';
import type { ChannelConfigT, ChannelT, CreateChannel, PatchChannel } from './schema.js';
import { checkResend, issueVerification, sendVerification, type VerificationMailer } from './verification.js';
import { deleteChannelRow, getChannelRow, insertChannel, listChannelRows, updateChannelRow, type ChannelRow, type ChannelValues } from './store.js';

export interface ChannelsCtx {
  db: Db;
  actor: Actor;
  org: OrgRef;
  plan: EffectivePlan;
  plans: PlanService;
  sealer: Sealer;
  guard: NetworkGuard;
  writeSource: WriteSource;
  verification: VerificationMailer;
}

/** The one mapping from a row to the API object; secrets read back as `***`. */
export function toChannel(row: ChannelRow): ChannelT {
  return {
    id: row.id, name: row.name, enabled: row.enabled, config: redactConfig(row.config), auto_bind_tags: row.auto_bind_tags,
    acknowledge_button: row.acknowledge_button, resolve_button: row.resolve_button, write_source: row.write_source,
    verified: row.verified_at !== null,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

const autoBindTags = (tags: readonly string[]): string[] => normalizeTags(tags, 'auto_bind_tags', { ignoreCase: true });

/** 403 `SMS_ALERTS_DISABLED`: an SMS channel needs a plan with SMS alerts; one made earlier stays editable. */
export function checkSmsAllowed(config: ChannelConfigT, plan: EffectivePlan, existingKind?: string): void {
  if (config.type === 'sms' && existingKind !== 'sms' && !plan.flags.sms_alerts_enabled) {
    throw new AppError(403, 'SMS_ALERTS_DISABLED', 'this plan includes no SMS alerts');
  }
}

/** Checks a config from a body and seals it for storage. */
async function prepareConfig(ctx: ChannelsCtx, config: ChannelConfigT): Promise<ChannelRow['config']> {
  refuseSentinel(config);
  await checkConfigUrls(config, ctx.guard);
  return sealConfig(config, ctx.sealer);
}

export async function listChannels(ctx: ChannelsCtx, page: { limit: number; offset: number }) {
  const { rows, total } = await listChannelRows(ctx.db, ctx.org.id, page);
  return { notification_channels: rows.map(toChannel), total, limit: page.limit, offset: page.offset };
}

export async function getChannelRowInOrg(ctx: Pick<ChannelsCtx, 'db' | 'org'>, id: string): Promise<ChannelRow> {
  const row = await getChannelRow(ctx.db, ctx.org.id, id);
  if (!row) throw notFound('notification channel');
  return row;
}

export async function getChannelInOrg(ctx: ChannelsCtx, id: string): Promise<ChannelT> {
  return toChannel(await getChannelRowInOrg(ctx, id));
}

async function insertWithinQuota(ctx: ChannelsCtx, tx: Executor, values: ChannelValues): Promise<ChannelRow> {
  await lockQuotaPool(tx, 'channels', ctx.org.accountId);
  const limit = (await ctx.plans.load(tx, ctx.org.accountId)).caps.max_notification_channels;
  const row = await insertChannel(tx, { id: newId(), orgId: ctx.org.id, accountId: ctx.org.accountId, limit, ...values });
  if (!row) throw quotaExceeded('max_notification_channels', limit);
  return row;
}

export async function createChannel(ctx: ChannelsCtx, input: CreateChannel): Promise<ChannelT> {
  checkSmsAllowed(input.config, ctx.plan);
  const values: ChannelValues = {
    name: requiredText(input.name, 'name'),
    enabled: input.enabled ?? true,
    config: await prepareConfig(ctx, input.config),
    auto_bind_tags: autoBindTags(input.auto_bind_tags ?? []),
    acknowledge_button: input.acknowledge_button ?? true,
    resolve_button: input.resolve_button ?? false,
    write_source: ctx.writeSource,
  };
  const { row, mail } = await ctx.db.transaction(async (tx) => {
    const row = await insertWithinQuota(ctx, tx, values);
    await writeAudit(tx, ctx.actor, {
      action: 'channel.created', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'notification_channel', entityId: row.id,
      details: { name: row.name, type: row.kind, write_source: row.write_source },
    });
    const mail = row.kind === 'email' ? await issueVerification(tx, row, ctx.verification.publicBaseUrl, ctx.verification.clock.now()) : null;
    return { row, mail };
  });
  await sendVerification(ctx.verification, mail);
  return toChannel(row);
}

export async function patchChannel(ctx: ChannelsCtx, id: string, input: PatchChannel): Promise<ChannelT> {
  // The id before the body's rules: a foreign or unknown channel is 404 whatever was sent. (The
  // config is prepared outside the transaction: it may resolve names.)
  if (!(await getChannelRow(ctx.db, ctx.org.id, id))) throw notFound('notification channel');
  const config = input.config && (await prepareConfig(ctx, input.config));
  const name = input.name === undefined ? undefined : requiredText(input.name, 'name');
  const tags = input.auto_bind_tags === undefined ? undefined : autoBindTags(input.auto_bind_tags);
  const { row, mail } = await ctx.db.transaction(async (tx) => {
    const current = await getChannelRow(tx, ctx.org.id, id, 'update');
    if (!current) throw notFound('notification channel');
    if (input.config) checkSmsAllowed(input.config, ctx.plan, current.kind);
    const row = (await updateChannelRow(tx, ctx.org.id, id, {
      name: name ?? current.name,
      enabled: input.enabled ?? current.enabled,
      config: config ?? current.config,
      auto_bind_tags: tags ?? current.auto_bind_tags,
      acknowledge_button: input.acknowledge_button ?? current.acknowledge_button,
      resolve_button: input.resolve_button ?? current.resolve_button,
      write_source: ctx.writeSource,
    }))!;
    await writeAudit(tx, ctx.actor, {
      action: 'channel.updated', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'notification_channel', entityId: id,
      details: { fields: Object.keys(input).sort(), type: row.kind, write_source: row.write_source },
    });
    // A new address (or a channel newly email) is confirmed again before it pages.
    const readdressed = row.kind === 'email' && !row.verified_at && (current.kind !== 'email' || current.verified_at !== null || current.config.to !== row.config.to);
    const mail = readdressed ? await issueVerification(tx, row, ctx.verification.publicBaseUrl, ctx.verification.clock.now()) : null;
    return { row, mail };
  });
  await sendVerification(ctx.verification, mail);
  return toChannel(row);
}

/** `resend-verification`: a fresh link to an unverified email channel, at most one a minute. */
export async function resendVerification(ctx: ChannelsCtx, id: string): Promise<void> {
  const mail = await ctx.db.transaction(async (tx) => {
    const row = await getChannelRow(tx, ctx.org.id, id, 'update');
    if (!row) throw notFound('notification channel');
    const now = ctx.verification.clock.now();
    checkResend(row, now);
    return issueVerification(tx, row, ctx.verification.publicBaseUrl, now);
  });
  await sendVerification(ctx.verification, mail);
}

export async function deleteChannel(ctx: ChannelsCtx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const current = await getChannelRow(tx, ctx.org.id, id);
    if (!current) throw notFound('notification channel');
    const { deleted, unbound } = await deleteChannelRow(tx, ctx.org.id, id, ctx.writeSource);
    if (!deleted) throw notFound('notification channel');
    await writeAudit(tx, ctx.actor, {
      action: 'channel.deleted', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'notification_channel', entityId: id,
      details: { name: current.name, type: current.kind, unbound_targets: unbound.length },
    });
  });
}
