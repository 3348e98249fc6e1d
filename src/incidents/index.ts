// The incidents domain as other code sees it.
export { foldIntoIncidents } from './engine.js';
export { registerIncidentRoutes } from './routes.js';
