// Outgoing mail through nodemailer: SMTP at `mail.smtp_url`, or, when it is unset, the log (a
// self-hosted install without mail still shows what it would have sent, links included).
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';

export interface Mail { to: string; subject: string; text: string; html: string; headers?: Record<string, string> }

export class Mailer {
  private readonly transport: Transporter | null;

  constructor(smtpUrl: string | undefined, private readonly from: string, private readonly log: Logger) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : null;
  }

  async send(mail: Mail): Promise<void> {
    if (!this.transport) {
      this.log.info({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, 'mail (no mail.smtp_url set: logged, not sent)');
      return;
    }
    await this.transport.sendMail({ from: this.from, ...mail });
  }

  close(): void {
    this.transport?.close();
  }
}

/** Text to HTML, escaped: mail bodies are built as text and wrapped once. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
