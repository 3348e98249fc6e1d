// Acknowledge links in alerts: the chat, messenger, email and push-topic kinds carry one when the
// channel's `acknowledge_button` is on. The link is a capability (whoever holds the alert may
// acknowledge), minted per alert, stored hashed, good for 7 days. Following it shows a page with a
// button; only the button's POST acts, so a mail scanner fetching links acknowledges nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Db, Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { acknowledgeIncident } from './service.js';

export const ACTION_PATH = '/act';
const ACTION_TTL_MS = 7 * 86_400_000;
/** Kinds whose messages carry the acknowledge link (spec: chat, messenger, email, push-topic). */
export const ACK_BUTTON_KINDS: ReadonlySet<string> = new Set(['slack', 'discord', 'teams', 'telegram', 'email', 'ntfy']);

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A fresh acknowledge link for one alert. */
export async function mintAcknowledgeLink(db: Executor, publicBaseUrl: string, incidentId: string, channelId: string, now: Date): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.query('INSERT INTO alert_actions (token_hash, incident_id, channel_id, action, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [hashOf(token), incidentId, channelId, 'acknowledge', new Date(now.getTime() + ACTION_TTL_MS)]);
  return `${publicBaseUrl.replace(/\/+$/, '')}${ACTION_PATH}/${token}`;
}

interface ActionTarget { incident_id: string; org_id: string; account_id: string; slug: string; title: string | null; status: string; acknowledged_at: Date | null; channel_name: string | null }

/** What a link points at; an unknown or expired one is 404. */
export async function lookupAction(db: Executor, token: string, now: Date): Promise<ActionTarget> {
  const [row] = await db.query<ActionTarget>(
    `SELECT i.id AS incident_id, i.org_id, o.account_id, o.slug, i.title, i.status, i.acknowledged_at, c.name AS channel_name
       FROM alert_actions a JOIN incidents i ON i.id = a.incident_id JOIN orgs o ON o.id = i.org_id
       LEFT JOIN notification_channels c ON c.id = a.channel_id
      WHERE a.token_hash = $1 AND a.expires_at > $2`, [hashOf(token), now]);
  if (!row) throw new AppError(404, 'NOT_FOUND', 'this link is unknown or expired');
  return row;
}

/** Acknowledges for whoever holds the alert: audited and on the timeline as the alert link. */
export async function redeemAcknowledge(deps: { db: Db; clock: Clock }, token: string): Promise<ActionTarget & { outcome: 'acknowledged' | 'already' | 'resolved' }> {
  const target = await lookupAction(deps.db, token, deps.clock.now());
  if (target.status === 'resolved') return { ...target, outcome: 'resolved' };
  if (target.acknowledged_at) return { ...target, outcome: 'already' };
  await acknowledgeIncident({
    db: deps.db, clock: deps.clock, actor: { type: 'system', job: `alert-link:${target.channel_name ?? 'deleted channel'}` },
    org: { id: target.org_id, slug: target.slug, accountId: target.account_id, role: 'Member' },
  }, target.incident_id);
  return { ...target, outcome: 'acknowledged' };
}
