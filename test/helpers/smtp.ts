// A real SMTP server on 127.0.0.1 (smtp-server) that keeps every message it receives.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received { to: string; raw: string }

export interface SmtpInbox {
  /** `smtp://127.0.0.1:<port>`, for `mail.smtp_url`. */
  url: string;
  /** Every message received, oldest first. */
  messages: Received[];
  close(): Promise<void>;
}

export async function startSmtpInbox(): Promise<SmtpInbox> {
  const messages: Received[] = [];
  const smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (c: Buffer) => { raw += c.toString(); });
      stream.on('end', () => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
