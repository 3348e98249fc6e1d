// Channel test sends (monitoring-api.md: `POST /notification-channels/test` for an unsaved config,
// `/{id}/test` for a saved channel): a synthetic alert through the same delivery path as real
// ones, answered with whether the receiver took it. Nothing is stored.
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

/** An unsaved config, held to the rules a create applies (sentinel, SSRF, the SMS plan gate). */
export async function testUnsavedConfig(ctx: ChannelsCtx & { deliverer: Deliverer }, config: ChannelConfigT): Promise<TestSendResult> {
  refuseSentinel(config);
  checkSmsAllowed(config, ctx.plan);
  await checkConfigUrls(config, ctx.guard);
  return sendTest(ctx.deliverer, config);
}

export async function testSavedChannel(ctx: ChannelsCtx & { deliverer: Deliverer }, id: string): Promise<TestSendResult> {
  const row = await getChannelRowInOrg(ctx, id);
  const config = openConfig(row.config, ctx.sealer);
  if (!config) return { delivered: false, error: 'a channel secret was sealed under a key that is no longer configured' };
  return sendTest(ctx.deliverer, config);
}
