// The help form (service-api.md: POST /api/v1/support; rate budget "support", 2 a minute, fixed):
// stored, mailed to support.mail_to through a real SMTP server, strict body, the fixed budget.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp.js';
import { client, expectError, type Json } from '../targets/helpers.js';

describe('support requests', () => {
  let t: TestApp;
  let smtp: SmtpInbox;

  before(async () => {
    smtp = await startSmtpInbox();
    t = await startTestApp({ config: { 'mail.smtp_url': smtp.url, 'support.mail_to': 'help@keepwatch.example' } });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const stored = (id: string) => t.services.db.query<{ user_id: string; org_id: string; subject: string | null; message: string; mailed_at: Date | null }>(
    'SELECT user_id, org_id, subject, message, mailed_at FROM support_requests WHERE id = $1', [id]);

  it('keeps the request with its user and org, mails it to support.mail_to with a reply-to, and answers 202 with a receipt', async () => {
    const tenant = await createTenantWithToken(t);
    const res = await client(t, tenant.token)('POST', '/api/v1/support', { subject: '  Alerts are late  ', message: 'My heartbeat alert came 10 minutes late.\nWhy?' });
    assert.equal(res.statusCode, 202, res.body);
    const receipt = res.json() as Json;
    assert.deepEqual(Object.keys(receipt).sort(), ['id', 'received_at']);
    const [row] = await stored(receipt.id);
    assert.deepEqual([row!.user_id, row!.org_id, row!.subject, row!.message], [tenant.userId, tenant.orgId, 'Alerts are late', 'My heartbeat alert came 10 minutes late.\nWhy?']);
    assert.ok(row!.mailed_at);
    const mail = smtp.messages.find((m) => m.raw.includes(receipt.id));
    assert.ok(mail, 'mailed');
    assert.equal(mail.to, 'help@keepwatch.example');
    assert.match(mail.raw, /Subject: \[Keepwatch support\] Alerts are late/);
    assert.match(mail.raw, /Reply-To: /i);
  });

  it('refuses a blank or oversized message, a multi-line subject and unknown keys, naming the field', async () => {
    const api = client(t, (await createTenantWithToken(t)).token);
    expectError(await api('POST', '/api/v1/support', { message: '   ' }), 400, 'VALIDATION_FAILED', 'message');
    expectError(await api('POST', '/api/v1/support', { message: 'x'.repeat(5001) }), 400, 'VALIDATION_FAILED', 'message');
    // The budget is 2 a minute: each refusal above was charged, so a fresh user goes on.
    const api2 = client(t, (await createTenantWithToken(t)).token);
    expectError(await api2('POST', '/api/v1/support', { message: 'hi', subject: 'a\nb' }), 400, 'VALIDATION_FAILED', 'subject');
    expectError(await api2('POST', '/api/v1/support', { message: 'hi', priority: 'urgent' }), 422, 'INVALID_JSON', 'priority');
  });

  it('takes 2 a minute per user whatever the plan; the third is 429 with Retry-After and stores nothing', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const api = client(t, tenant.token);
    for (let i = 0; i < 2; i++) assert.equal((await api('POST', '/api/v1/support', { message: `question ${i}` })).statusCode, 202);
    const third = await api('POST', '/api/v1/support', { message: 'question 2' });
    expectError(third, 429, 'RATE_LIMITED');
    assert.ok(Number(third.headers['retry-after']) >= 1);
    const rows = await t.services.db.query('SELECT 1 FROM support_requests WHERE user_id = $1', [tenant.userId]);
    assert.equal(rows.length, 2);
  });
});
