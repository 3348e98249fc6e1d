// Channel test sends (monitoring-api.md: `POST /notification-channels/test` for an unsaved config,
// `/{id}/test` for a saved channel): a synthetic alert through the same delivery path as real
// ones, answered with whether the receiver took it. Nothing is stored. Mail goes only to an address
// that confirmed it takes this org's alerts, as alerts themselves do: a test send is no way to mail
// strangers from the service.
import type { Executor } from '../db/db.js';
import type { Deliverer } from '../notifications/index.js';
import { newId } from '../shared/ids.js';
import { checkConfigUrls, openConfig, refuseSentinel } from './configs.js';
import type { ChannelConfigT } from './schema.js';
import { checkSmsAllowed, getChannelRowInOrg, type ChannelsCtx } from './service.js';

export interface TestSendResult { delivered: boolean; error: string | null }

async function sendTest(deliverer: Deliverer, config: ChannelConfigT): Promise<TestSendResult> {
  const now = new Date().toISOString();
  try {
    await deliverer.send(config, {
      id: newId(), event: 'opened', test: true,
      incident: {
        id: newId(), title: 'Test alert from Keepwatch', status: 'open', impact: 'major_outage',
        cause: 'A test send: nothing is down.', started_at: now, ended_at: null, reminders_sent: 0,
      },
      monitor: null,
    });
    return { delivered: true, error: null };
  } catch (err) {
    return { delivered: false, error: (err as Error).message };
  }
}

const notConfirmed = (to: string, how: string): TestSendResult => ({ delivered: false, error: `not sent: ${to} ${how}` });

/** An unsaved config, held to the rules a create applies (sentinel, SSRF, the SMS plan gate). */
export async function testUnsavedConfig(ctx: ChannelsCtx & { deliverer: Deliverer }, config: ChannelConfigT): Promise<TestSendResult> {
  refuseSentinel(config);
  checkSmsAllowed(config, ctx.plan);
  await checkConfigUrls(config, ctx.guard);
  if (config.type === 'email' && !(await isConfirmedAddress(ctx.db, ctx.org.id, config.to))) {
    return notConfirmed(config.to, 'is confirmed by no email channel of this org; save the channel and follow the link mailed to the address');
  }
  return sendTest(ctx.deliverer, config);
}

export async function testSavedChannel(ctx: ChannelsCtx & { deliverer: Deliverer }, id: string): Promise<TestSendResult> {
  const row = await getChannelRowInOrg(ctx, id);
  const config = openConfig(row.config, ctx.sealer);
  if (!config) return { delivered: false, error: 'a channel secret was sealed under a key that is no longer configured' };
  if (config.type === 'email' && row.verified_at === null) return notConfirmed(config.to, 'is not confirmed for this channel yet, which sends no alert until then: follow the link mailed to it (resend-verification mails a fresh one)');
  return sendTest(ctx.deliverer, config);
}

/** Whether an email channel of the org has this address confirmed (addresses compared ignoring case). */
async function isConfirmedAddress(db: Executor, orgId: string, to: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM notification_channels
      WHERE org_id = $1 AND kind = 'email' AND verified_at IS NOT NULL AND lower(config->>'to') = lower($2) LIMIT 1`, [orgId, to]);
  return rows.length > 0;
}
