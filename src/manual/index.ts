// Manual monitors as other code sees them.
export { registerManualRoutes } from './routes.js';
export { manualStates, resultOfState } from './service.js';
