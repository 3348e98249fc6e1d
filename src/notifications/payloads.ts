// What each channel kind receives (monitoring-api.md leaves payloads open: "The payload format
// sent to each channel kind: not shown"). Pure: a notification in, the HTTP request body out.
import { escapeHtml } from '../mail/mailer.js';
import type { NotificationEvent } from './outbox.js';

export interface NotificationFacts {
  /** The notification's id: the idempotency key a receiver can drop a repeat by. */
  id: string;
  event: NotificationEvent;
  incident: {
    id: string; title: string | null; status: string; impact: string; cause: string | null;
    started_at: string; ended_at: string | null; reminders_sent: number;
  };
  monitor: { id: string; name: string } | null;
  /** A channel test send: nothing is down. */
  test?: boolean;
  /** Links that act for whoever holds the alert (the channel's `acknowledge_button`). */
  actions?: { acknowledge?: string };
}

const HEADLINE: Record<NotificationEvent, string> = { opened: 'Incident opened', reminder: 'Still unresolved', recovered: 'Recovered' };

/** One line a person reads first. */
export function headline(f: NotificationFacts): string {
  const what = f.incident.title ?? f.monitor?.name ?? 'an incident';
  return `${f.test ? '[Test] ' : ''}${HEADLINE[f.event]}: ${what}`;
}

function detail(f: NotificationFacts): string {
  const lines = [`Impact: ${f.incident.impact.replace('_', ' ')}`, `Started: ${f.incident.started_at}`];
  if (f.incident.cause) lines.push(`Cause: ${f.incident.cause}`);
  if (f.incident.ended_at) lines.push(`Ended: ${f.incident.ended_at}`);
  return lines.join('\n');
}

/** The generic webhook's JSON document (documented in OpenAPI on the channel config). */
export function webhookBody(f: NotificationFacts): Record<string, unknown> {
  return { id: f.id, event: f.event, test: f.test ?? false, incident: f.incident, monitor: f.monitor };
}

export function slackBody(f: NotificationFacts): Record<string, unknown> {
  return {
    text: headline(f),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: headline(f).slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: detail(f) } },
      ...(f.actions?.acknowledge ? [{ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Acknowledge' }, url: f.actions.acknowledge, style: 'primary' }] }] : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `keepwatch · ${f.id}` }] },
    ],
  };
}

const DISCORD_COLOUR: Record<NotificationEvent, number> = { opened: 0xd93f0b, reminder: 0xfbca04, recovered: 0x0e8a16 };

export function discordBody(f: NotificationFacts): Record<string, unknown> {
  return {
    content: headline(f).slice(0, 2000),
    embeds: [{ title: headline(f).slice(0, 256), description: `${detail(f)}${f.actions?.acknowledge ? `\n\n[Acknowledge](${f.actions.acknowledge})` : ''}`.slice(0, 4096), color: DISCORD_COLOUR[f.event], footer: { text: `keepwatch · ${f.id}` } }],
  };
}

/** Teams incoming webhooks take an Adaptive Card in a message attachment. */
export function teamsBody(f: NotificationFacts): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [{
      contentType: 'application/vnd.microsoft.card.adaptive',
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4',
        body: [
          { type: 'TextBlock', size: 'Medium', weight: 'Bolder', text: headline(f), wrap: true },
          { type: 'TextBlock', text: detail(f), wrap: true },
          { type: 'TextBlock', isSubtle: true, text: `keepwatch · ${f.id}`, wrap: true },
        ],
        ...(f.actions?.acknowledge && { actions: [{ type: 'Action.OpenUrl', title: 'Acknowledge', url: f.actions.acknowledge }] }),
      },
    }],
  };
}

/** ntfy's JSON publish: the topic travels in the body, posted to the server root. */
export function ntfyBody(topic: string, f: NotificationFacts): Record<string, unknown> {
  return {
    topic, title: headline(f), message: detail(f),
    priority: f.event === 'recovered' ? 3 : 5,
    tags: [f.event === 'recovered' ? 'white_check_mark' : 'rotating_light'],
    ...(f.actions?.acknowledge && { actions: [{ action: 'view', label: 'Acknowledge', url: f.actions.acknowledge }] }),
  };
}

export function telegramBody(chatId: string | number, f: NotificationFacts): Record<string, unknown> {
  return {
    chat_id: chatId, text: `${headline(f)}\n${detail(f)}`, disable_web_page_preview: true,
    ...(f.actions?.acknowledge && { reply_markup: { inline_keyboard: [[{ text: 'Acknowledge', url: f.actions.acknowledge }]] } }),
  };
}

const PAGERDUTY_SEVERITY: Record<string, string> = { major_outage: 'critical', partial_outage: 'error', degraded: 'warning' };

/** Events API v2: the incident id is the dedup key, so reminders re-trigger one alert and recovery resolves it. */
export function pagerdutyBody(routingKey: string, f: NotificationFacts): Record<string, unknown> {
  return {
    routing_key: routingKey,
    event_action: f.event === 'recovered' ? 'resolve' : 'trigger',
    dedup_key: f.incident.id,
    payload: {
      summary: headline(f).slice(0, 1024), source: f.monitor?.name ?? 'keepwatch',
      severity: PAGERDUTY_SEVERITY[f.incident.impact] ?? 'error', timestamp: f.incident.started_at,
      custom_details: { cause: f.incident.cause, notification_id: f.id },
    },
  };
}

/** An alert mail: the headline as subject, the facts as text and as the same text in HTML. */
export function emailBody(f: NotificationFacts): { subject: string; text: string; html: string } {
  const ack = f.actions?.acknowledge;
  const text = `${headline(f)}\n\n${detail(f)}${ack ? `\n\nAcknowledge: ${ack}` : ''}\n\nNotification ${f.id}`;
  const html = `<h2>${escapeHtml(headline(f))}</h2><p>${detail(f).split('\n').map(escapeHtml).join('<br>')}</p>` +
    `${ack ? `<p><a href="${escapeHtml(ack)}">Acknowledge</a></p>` : ''}<p style="color:#666">Notification ${f.id}</p>`;
  return { subject: headline(f), text, html };
}

/** One SMS: the headline and the cause, within a single 160-character segment where it can. */
export function smsText(f: NotificationFacts): string {
  const text = f.incident.cause && f.event !== 'recovered' ? `${headline(f)} (${f.incident.cause})` : headline(f);
  return text.length <= 160 ? text : `${text.slice(0, 159)}…`;
}
