// Sends one notification to one channel. Every channel URL goes through the SSRF guard at connect
// time, as a monitor's does (pinned addresses, no redirects followed). A 2xx answer is delivered;
// anything else is a failure the worker retries.
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { pinnedLookup, type NetworkGuard } from '../net/guard.js';
import type { ChannelConfigT } from '../channels/schema.js';
import type { Mailer } from '../mail/mailer.js';
import { discordBody, emailBody, smsText, ntfyBody, pagerdutyBody, slackBody, teamsBody, telegramBody, webhookBody, type NotificationFacts } from './payloads.js';

const TELEGRAM_API = 'https://api.telegram.org';
const PAGERDUTY_EVENTS = 'https://events.pagerduty.com/v2/enqueue';

const SEND_TIMEOUT_MS = 10_000;
const USER_AGENT = 'Keepwatch-Notifier/1';

export class DeliveryError extends Error {
  constructor(message: string, readonly options: { retryAfterMs?: number; permanent?: boolean } = {}) {
    super(message);
  }
}

/** `X-Keepwatch-Signature` of a generic webhook: `sha256=` and the body's HMAC-SHA256 in hex. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class Deliverer {
  private readonly agent: Agent;
  private readonly plain = new Agent({ connect: { timeout: SEND_TIMEOUT_MS } });

  constructor(
    private readonly guard: NetworkGuard,
    private readonly mailer: Mailer,
    /** The deployment's SMS gateway (`sms.provider_url`): operator configuration, so not guarded. */
    private readonly sms: { url: string; token: string | undefined } | null = null,
  ) {
    this.agent = new Agent({ connect: { lookup: pinnedLookup(guard), timeout: SEND_TIMEOUT_MS } });
  }

  async send(config: ChannelConfigT, facts: NotificationFacts): Promise<void> {
    switch (config.type) {
      case 'webhook': {
        const body = JSON.stringify(webhookBody(facts));
        const headers: Record<string, string> = { 'x-keepwatch-event': facts.event, 'x-keepwatch-delivery': facts.id };
        if (config.secret) headers['x-keepwatch-signature'] = signature(config.secret, body);
        return this.post(config.url, body, headers);
      }
      case 'slack': return this.post(config.webhook_url, JSON.stringify(slackBody(facts)));
      case 'discord': return this.post(config.webhook_url, JSON.stringify(discordBody(facts)));
      case 'teams': return this.post(config.webhook_url, JSON.stringify(teamsBody(facts)));
      case 'ntfy':
        return this.post(config.server_url, JSON.stringify(ntfyBody(config.topic, facts)), config.token ? { authorization: `Bearer ${config.token}` } : {});
      case 'telegram': {
        const api = (config.api_base_url ?? TELEGRAM_API).replace(/\/+$/, '');
        return this.post(`${api}/bot${config.bot_token}/sendMessage`, JSON.stringify(telegramBody(config.chat_id, facts)));
      }
      case 'email': {
        try {
          return await this.mailer.send({ to: config.to, ...emailBody(facts), headers: { 'X-Keepwatch-Notification': facts.id } });
        } catch (err) {
          throw new DeliveryError(`mail: ${(err as Error).message}`);
        }
      }
      case 'sms': {
        if (!this.sms) throw new DeliveryError('no SMS provider is configured (sms.provider_url)', { permanent: true });
        const auth: Record<string, string> = this.sms.token ? { authorization: `Bearer ${this.sms.token}` } : {};
        return this.post(this.sms.url, JSON.stringify({ id: facts.id, to: config.to, body: smsText(facts) }), auth, false);
      }
      case 'pagerduty': return this.post(config.events_url ?? PAGERDUTY_EVENTS, JSON.stringify(pagerdutyBody(config.routing_key, facts)));
    }
  }

  /** POSTs JSON; `guarded` URLs (every tenant-supplied one) go through the SSRF guard. */
  private async post(url: string, body: string, headers: Record<string, string> = {}, guarded = true): Promise<void> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    // The pinned lookup guards names; a literal address is judged here, as Node skips lookup for it.
    if (guarded && isIP(host)) await this.guard.resolveForConnect(host).catch((err: Error) => { throw new DeliveryError(err.message); });
    let res;
    try {
      res = await request(url, {
        method: 'POST', dispatcher: guarded ? this.agent : this.plain, body,
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        headersTimeout: SEND_TIMEOUT_MS, bodyTimeout: SEND_TIMEOUT_MS,
      });
    } catch (err) {
      throw new DeliveryError((err as Error).message);
    }
    await res.body.dump();
    if (res.statusCode >= 200 && res.statusCode < 300) return;
    const retryAfter = Number(res.headers['retry-after']);
    throw new DeliveryError(`HTTP ${res.statusCode}`, Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {});
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.plain.close()]);
  }
}
