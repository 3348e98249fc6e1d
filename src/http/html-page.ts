// Plain HTML pages for a person in a browser, behind links mailed or posted in alerts (acknowledge,
// channel verification). Never cached: each answers for one token at one moment.
import type { FastifyReply } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { escapeHtml } from '../mail/mailer.js';

/** The response of such a page, success or 404, documented as the `text/html` it is. */
export const HtmlPage = { description: 'An HTML page.', content: { 'text/html': { schema: Type.String() } } } as unknown as TSchema;

/** Answers a page titled `title`; `body` is HTML the caller has already escaped. */
export function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(
    `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1 style="font-size:1.4rem">${escapeHtml(title)}</h1>${body}</body></html>`);
}
