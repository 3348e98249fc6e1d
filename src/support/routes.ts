// The in-app help form (service-api.md: `POST /api/v1/support`, budget "support": 2 a minute,
// fixed, outside the plan). A request is stored first, then mailed to `support.mail_to` when set;
// mail trouble never loses it (`mailed_at` stays null and the log says why).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute } from '../http/route.js';
import { cfg } from '../config/load.js';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { escapeHtml } from '../mail/mailer.js';

export const SUPPORT_MESSAGE_MAX = 5000;
export const SUPPORT_SUBJECT_MAX = 200;

const SupportBody = Type.Object({
  subject: Type.Optional(Type.Union([Type.String({ maxLength: SUPPORT_SUBJECT_MAX, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$' }), Type.Null()], {
    description: `One line, at most ${SUPPORT_SUBJECT_MAX} characters, trimmed; optional.`,
  })),
  message: Type.String({ minLength: 1, maxLength: SUPPORT_MESSAGE_MAX, description: `What you need help with: 1-${SUPPORT_MESSAGE_MAX} characters, not blank.` }),
}, { additionalProperties: false });

const SupportReceipt = Type.Object({
  id: Type.String({ format: 'uuid' }),
  received_at: Type.String({ format: 'date-time' }),
});

export function registerSupportRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'POST', url: '/api/v1/support', auth: 'user', orgScoped: false, tags: ['support'],
    summary: 'Ask for help (the in-app help form)',
    description: `Any API token may send it; the org of the request (bound or named by \`X-Service-Org\`) is recorded with it. Kept by the service and mailed to the support address the deployment configures (\`support.mail_to\`). Answers 202 with a receipt. Budget: 2 a minute per account and per user, whatever the plan (429 \`RATE_LIMITED\` with \`Retry-After\`).`,
    body: SupportBody,
    response: { 202: SupportReceipt },
    handler: async (request, reply) => reply.code(202).send(await submitSupportRequest(services, request.auth!, request.body)),
  });
}

type SupportInput = Static<typeof SupportBody>;

async function submitSupportRequest(services: Services, auth: { userId: string; org: { id: string; slug: string } | null }, input: SupportInput) {
  const message = input.message.trim();
  if (!message) throw new AppError(400, 'VALIDATION_FAILED', 'message: must not be blank', { field: 'message' });
  const subject = input.subject?.trim() || null;
  const id = newId();
  const now = services.clock.now();
  await services.db.query(
    'INSERT INTO support_requests (id, user_id, org_id, subject, message, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, auth.userId, auth.org?.id ?? null, subject, message, now]);
  await mailToSupport(services, { id, userId: auth.userId, org: auth.org, subject, message, at: now });
  return { id, received_at: now.toISOString() };
}

async function mailToSupport(services: Services, req: { id: string; userId: string; org: { slug: string } | null; subject: string | null; message: string; at: Date }): Promise<void> {
  const to = cfg.optStr(services.config, 'support.mail_to');
  if (!to) {
    services.log.info({ support_request: req.id }, 'support request stored (no support.mail_to set: not mailed)');
    return;
  }
  const [user] = await services.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [req.userId]);
  const text = [
    `From: ${user?.email ?? req.userId}`, `Org: ${req.org?.slug ?? '-'}`, `Request: ${req.id}`, `Received: ${req.at.toISOString()}`, '', req.message,
  ].join('\n');
  try {
    await services.mailer.send({
      to, subject: `[Keepwatch support] ${req.subject ?? req.message.split('\n', 1)[0]!.slice(0, 80)}`, text, html: `<pre>${escapeHtml(text)}</pre>`,
      ...(user && { headers: { 'reply-to': user.email } }),
    });
    await services.db.query('UPDATE support_requests SET mailed_at = $2 WHERE id = $1', [req.id, services.clock.now()]);
  } catch (err) {
    // Kept: the request is stored and the operator can read it there.
    services.log.error({ err, support_request: req.id }, 'mailing a support request failed; it is kept in support_requests');
  }
}
