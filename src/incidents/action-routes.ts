// The pages behind acknowledge links in alerts: GET shows the incident and a button, the button's
// POST acknowledges. Plain HTML for a person in a browser; outside the token API, like ping URLs.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HtmlPage, page } from '../http/html-page.js';
import { addRoute } from '../http/route.js';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { ACTION_PATH, lookupAction, redeemAcknowledge } from './alert-actions.js';

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });

const GONE = '<p>This link is unknown or has expired (links last 7 days).</p>';

export function registerAlertActionRoutes(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    // The button is an HTML form: it posts an empty urlencoded body, which this page ignores.
    scope.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null, undefined));

    addRoute(scope, {
      method: 'GET', url: `${ACTION_PATH}/:token`, auth: 'public', tags: ['incidents'],
      summary: 'Acknowledge link from an alert (page)',
      description: 'The link in an alert of a channel with `acknowledge_button`: an HTML page naming the incident with an Acknowledge button (which POSTs to the same URL). Fetching it changes nothing. Unknown or expired (7 days) links are 404.',
      params: Params,
      response: { 200: HtmlPage, 404: HtmlPage },
      handler: async (request, reply) => {
        try {
          const target = await lookupAction(services.db, request.params.token, services.clock.now());
          const state = target.status === 'resolved' ? '<p>It is already resolved.</p>'
            : target.acknowledged_at ? '<p>It is already acknowledged.</p>'
            : '<form method="post"><button type="submit" style="font-size:1.1rem;padding:.5rem 1.2rem">Acknowledge</button></form><p>Acknowledging stops the reminders.</p>';
          return page(reply, 200, `Incident: ${target.title ?? 'untitled'}`, state);
        } catch (err) {
          if (err instanceof AppError && err.status === 404) return page(reply, 404, 'Link not found', GONE);
          throw err;
        }
      },
    });

    addRoute(scope, {
      method: 'POST', url: `${ACTION_PATH}/:token`, auth: 'public', tags: ['incidents'],
      summary: 'Acknowledge link from an alert (act)',
      description: 'Acknowledges the incident for whoever holds the alert (audited as `incident.acknowledged` by the system actor `alert-link:<channel name>`); answers an HTML page. An acknowledged or resolved incident is left as it is.',
      params: Params,
      response: { 200: HtmlPage, 404: HtmlPage },
      handler: async (request, reply) => {
        try {
          const done = await redeemAcknowledge(services, request.params.token);
          const message = { acknowledged: '<p>Acknowledged. Reminders have stopped.</p>', already: '<p>It was already acknowledged.</p>', resolved: '<p>It is already resolved.</p>' }[done.outcome];
          return page(reply, 200, `Incident: ${done.title ?? 'untitled'}`, message);
        } catch (err) {
          if (err instanceof AppError && err.status === 404) return page(reply, 404, 'Link not found', GONE);
          throw err;
        }
      },
    });
  });
}
