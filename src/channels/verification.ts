// Email channels page only once confirmed (monitoring-api.md, "Notification channels"): a link with
// a one-time token is mailed to the address on create and when the address changes, and again on
// `resend-verification`. The token is stored as its SHA-256 and lasts 7 days. Following the link
// shows a page; only its button's POST confirms, so a mail scanner fetching links confirms nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Executor } from '../db/db.js';
import type { Mailer } from '../mail/mailer.js';
import { escapeHtml } from '../mail/mailer.js';
import type { Clock } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import type { ChannelRow } from './store.js';

export const VERIFICATION_TTL_MS = 7 * 86_400_000;
/** The mailed link: a capability URL outside the token-authenticated API, like a ping URL. */
export const VERIFY_PATH = '/verify/channel';
/** One verification mail per channel per minute. */
export const RESEND_INTERVAL_MS = 60_000;

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Stores a fresh token for `row` (in `tx`) and returns the mail to send once it commits. */
export async function issueVerification(tx: Executor, row: ChannelRow, publicBaseUrl: string, now: Date) {
  const token = randomBytes(32).toString('base64url');
  await tx.query('UPDATE notification_channels SET verification_token_hash = $2, verification_sent_at = $3 WHERE id = $1', [row.id, hashOf(token), now]);
  const link = `${publicBaseUrl.replace(/\/+$/, '')}${VERIFY_PATH}/${token}`;
  const to = String(row.config.to);
  const text = `Keepwatch alerts for "${row.name}" will be sent to ${to} once you confirm it:\n\n${link}\n\nThe link works for 7 days. If you did not expect this, ignore it.`;
  return {
    to, subject: `Confirm Keepwatch alerts for ${row.name}`, text,
    html: `<p>Keepwatch alerts for <b>${escapeHtml(row.name)}</b> will be sent to ${escapeHtml(to)} once you confirm it.</p><p><a href="${escapeHtml(link)}">Confirm this address</a></p><p>The link works for 7 days. If you did not expect this, ignore it.</p>`,
  };
}

/** The channel a link confirms, as its page names it. */
export interface VerificationTarget { channel_id: string; name: string; address: string }

/** A link is good while its token is the channel's latest, unused and under 7 days old. */
const VALID_TOKEN = "verification_token_hash = $1 AND verification_sent_at > $2 AND kind = 'email'";
const validArgs = (token: string, now: Date): [string, Date] => [hashOf(token), new Date(now.getTime() - VERIFICATION_TTL_MS)];
const GONE = 'this verification link is unknown, used or expired';

/** What a link would confirm, changing nothing (the page a mail scanner may fetch); 404 like confirming. */
export async function lookupVerification(db: Executor, token: string, now: Date): Promise<VerificationTarget> {
  const [row] = await db.query<VerificationTarget>(
    `SELECT id AS channel_id, name, config->>'to' AS address FROM notification_channels WHERE ${VALID_TOKEN}`, validArgs(token, now));
  if (!row) throw new AppError(404, 'NOT_FOUND', GONE);
  return row;
}

/** Confirms the channel whose token this is; an unknown, used or expired token is 404. */
export async function confirmVerification(db: Executor, token: string, now: Date): Promise<VerificationTarget> {
  const [row] = await db.query<VerificationTarget>(
    `UPDATE notification_channels SET verified_at = $3, verification_token_hash = NULL
      WHERE ${VALID_TOKEN} RETURNING id AS channel_id, name, config->>'to' AS address`,
    [...validArgs(token, now), now]);
  if (!row) throw new AppError(404, 'NOT_FOUND', GONE);
  return row;
}

/** A resend needs an unverified email channel and a minute since the last mail. */
export function checkResend(row: ChannelRow, now: Date): void {
  if (row.kind !== 'email' || row.verified_at) throw new AppError(409, 'CONFLICT', 'only an unverified email channel has a verification to resend');
  const since = row.verification_sent_at ? now.getTime() - row.verification_sent_at.getTime() : Infinity;
  if (since < RESEND_INTERVAL_MS) {
    const retryAfter = Math.ceil((RESEND_INTERVAL_MS - since) / 1000);
    throw new AppError(429, 'RATE_LIMITED', `one verification mail a minute; try again in ${retryAfter} s`,
      { retryAfter, rejection: { event: 'rate_limited', quota: 'verification_mail', details: { channel_id: row.id } } });
  }
}

export type VerificationMail = Awaited<ReturnType<typeof issueVerification>>;

export interface VerificationMailer { mailer: Mailer; publicBaseUrl: string; clock: Clock; onError: (err: unknown) => void }

/** Sent once the change has committed; a failure is logged and `resend-verification` tries again. */
export async function sendVerification(m: VerificationMailer, mail: VerificationMail | null): Promise<void> {
  if (mail) await m.mailer.send(mail).catch(m.onError);
}
