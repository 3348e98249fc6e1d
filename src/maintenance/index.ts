// Maintenance windows as other code sees them.
import './usage.js';

export { registerMaintenanceRoutes } from './routes.js';
export { statusOf } from './service.js';
export { suppressedAtSql, suppressingSpans } from './store.js';
export { onMaintenanceUpdate, type MaintenanceListener, type MaintenanceUpdateNews } from './announcements.js';
