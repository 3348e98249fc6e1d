// The dashboard domain as other code sees it.
export { registerDashboardRoutes } from './routes.js';
export { DashboardSummary, type DashboardSummaryT } from './schema.js';
