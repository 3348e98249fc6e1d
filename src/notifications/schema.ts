// Per-incident delivery state (monitoring-api.md: `GET /api/v1/incidents/{id}/notifications`).
import { Type } from '@sinclair/typebox';
import { listOf, Pagination } from '../http/route.js';
import { nullable } from '../http/schema-helpers.js';

export const Notification = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Also the idempotency key of the payload: a receiver can drop a repeat.' }),
  channel_id: nullable(Type.String({ format: 'uuid', description: 'Null once the channel is deleted.' })),
  event: Type.Union([Type.Literal('opened'), Type.Literal('reminder'), Type.Literal('recovered')]),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')], {
    description: '`pending` until delivered; `dead` after 8 failed attempts (retries back off from 10 s, doubling, with jitter, up to an hour; a receiver\'s `Retry-After` may lengthen a wait up to that hour) or a failure no retry can fix, or for a `reminder` not sent because the incident was acknowledged or resolved first (`last_error` says so; `attempts` counts only sends tried).',
  }),
  attempts: Type.Integer({ minimum: 0 }),
  last_error: nullable(Type.String()),
  next_attempt_at: nullable(Type.String({ format: 'date-time', description: 'When a pending notification is tried next, at the earliest. Notifications of one incident and channel go in order, so one held behind an earlier one still retrying shows that one\'s next attempt (it goes once that one is delivered or dead).' })),
  created_at: Type.String({ format: 'date-time' }),
  delivered_at: nullable(Type.String({ format: 'date-time' })),
}, { additionalProperties: false });

export const NotificationsQuery = Type.Object(Pagination);
export const NotificationList = listOf('notifications', Notification, { order: 'Oldest first.' });
