import type { FastifyInstance } from 'fastify';
import { addRoute, IdParams } from '../http/route.js';
import type { Services } from '../services.js';
import { AppError } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import { NotificationList, NotificationsQuery } from './schema.js';

export function registerNotificationRoutes(app: FastifyInstance, services: Services): void {
  addRoute(app, {
    method: 'GET', url: '/api/v1/incidents/:id/notifications', auth: 'user', scope: 'incidents:read', tags: ['incidents'],
    summary: "An incident's notification delivery state",
    description: 'One entry per notification and channel, oldest first: opened, reminders, recovered; with attempts, the last error and when it is tried next.',
    params: IdParams, querystring: NotificationsQuery,
    response: { 200: NotificationList },
    handler: async (request) => {
      const orgId = request.auth!.org!.id;
      const { id } = request.params;
      const { limit = 50, offset = 0 } = request.query;
      const [incident] = isUuid(id) ? await services.db.query('SELECT 1 FROM incidents WHERE id = $1 AND org_id = $2', [id, orgId]) : [];
      if (!incident) throw new AppError(404, 'NOT_FOUND', 'no such incident');
      const [rows, [count]] = await Promise.all([
        services.db.query<{ id: string; channel_id: string | null; event: 'opened'; status: 'pending'; attempts: number; last_error: string | null; next_attempt_at: Date; created_at: Date; delivered_at: Date | null }>(
          // One held behind an earlier one of its channel still retrying goes no sooner than that one's next attempt (worker.ts claims in order).
          `SELECT id, channel_id, event, status, attempts, last_error, created_at, delivered_at,
                  GREATEST(next_attempt_at, (SELECT max(e.next_attempt_at) FROM notifications e
                                              WHERE e.incident_id = n.incident_id AND e.channel_id = n.channel_id AND e.status = 'pending'
                                                AND (e.created_at, e.id) < (n.created_at, n.id))) AS next_attempt_at
             FROM notifications n WHERE incident_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [id, limit, offset]),
        services.db.query<{ total: number }>('SELECT count(*)::int AS total FROM notifications WHERE incident_id = $1', [id]),
      ]);
      return {
        notifications: rows.map((r) => ({
          ...r, next_attempt_at: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
          created_at: r.created_at.toISOString(), delivered_at: r.delivered_at?.toISOString() ?? null,
        })),
        total: count!.total, limit, offset,
      };
    },
  });
}
