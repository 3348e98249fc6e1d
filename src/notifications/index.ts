// Notifications as other code sees them: the outbox the incident engine writes, the worker that
// delivers it, the delivery-state route.
export { Deliverer } from './deliver.js';
export { enqueueNotifications, reminderGapMs, type Enqueue } from './outbox.js';
export { registerNotificationRoutes } from './routes.js';
export { NotificationWorker, REMINDER_STOPPED, type WorkerOptions } from './worker.js';
